"""The Markdown summary a CI job page shows (issue 34): the verdict, coverage, the table by
area and every failure with its curl folded, whatever the server sent, within GitHub's size
limit; ``--markdown FILE``, and ``$GITHUB_STEP_SUMMARY`` (appended) whenever that is set."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from harness_support import run_catalog

from conformance.cli import main
from conformance.model import Finding, RuleResult, RunResult, RunStats, Target, Verdict
from conformance.reporting import markdown_summary, summary_destinations
from conformance.reporting.markdown import MAX_BYTES, fenced, inline
from conformance.rules import CATALOG
from conformance.target.embedded import EmbeddedMock

TARGET = Target("http://127.0.0.1:1/v1", "openai", "m", ())
HOSTILE = "a|b `code` <script>alert(1)</script> $x$ *bold* [link](http://x) ~~s~~ \\ &amp;\nline 2"
FAULTS = ["usage-total-wrong", "text-after-finish", "best-of-ignored"]


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


def rendered(markdown: str) -> str:
    """The HTML a CommonMark renderer with GitHub's tables makes of ``markdown``."""
    markdown_it = pytest.importorskip("markdown_it")
    return str(markdown_it.MarkdownIt("commonmark").enable("table").render(markdown))


def section(text: str, heading: str) -> str:
    return text.split(f"### {heading}", 1)[1].split("\n### ", 1)[0]


@pytest.fixture(scope="module")
def failing(mock: EmbeddedMock) -> RunResult:
    return run_catalog(mock.openai_url, "openai", faults=FAULTS)


def test_the_summary_has_the_verdict_coverage_table_and_every_failure(
    failing: RunResult,
) -> None:
    text = markdown_summary(failing)
    assert text.startswith("## completions conformance: ❌ FAILED\n")
    assert failing.coverage.line().split(";")[0].replace("_", "\\_") in text
    table = [line for line in text.splitlines() if re.match(r"\| [A-Z-]+ \| \d", line)]
    assert [row.split(" | ")[0][2:] for row in table] == list(failing.by_area())
    failures = section(text, "Failures")
    bad = [r for r in failing.results if r.verdict in (Verdict.FAIL, Verdict.NON_STRICT)]
    assert len(bad) >= 3
    for item in bad:
        row = next(line for line in failures.splitlines() if f"`{item.rule.id}`" in line)
        assert row.startswith(f"| {item.verdict.value.replace('_', '-')} |")
    reproduce = section(text, "Reproduce")
    blocks = reproduce.split("<details>")[1:]
    assert len(blocks) == len([r for r in failing.failures() if r.finding])
    usage = next(block for block in blocks if "USAGE-001" in block.split("\n", 1)[0])
    assert "```sh\ncurl -sS " in usage and "Expected:" in usage
    page = rendered(text)
    assert page.count("<details>") == len(blocks) and "<table>" in page


def test_a_clean_run_says_passed_and_lists_nothing(mock: EmbeddedMock) -> None:
    text = markdown_summary(run_catalog(mock.openai_url, "openai", select=["USAGE-*"]))
    assert text.startswith("## completions conformance: ✅ PASSED\n")
    assert "### Failures" not in text and "<details>" not in text


def test_server_text_stays_text() -> None:
    """A message quoting the server cannot split a table cell, open code, a tag, math or a
    link; a command holding backticks cannot close its fence."""
    rule = CATALOG.get("USAGE-001")
    curl = "curl -sS http://x --data-raw '```\n</details>\n<script>x</script>'"
    finding = Finding(HOSTILE, expected="```", actual=HOSTILE, path="choices[0]|text",
                      evidence=HOSTILE, curl=curl)
    result = RunResult(TARGET, (RuleResult(rule, Verdict.FAIL, HOSTILE, finding),),
                       stats=RunStats(requests=1))
    text = markdown_summary(result)
    row = next(line for line in text.splitlines() if "`USAGE-001`" in line)
    assert len(re.findall(r"(?<!\\)\|", row)) == 6  # five cells
    assert "<script>" not in row and "\\$x\\$" in row and "&amp;amp;" in row
    page = rendered(text)
    cells = re.findall(r"<td>(.*?)</td>", page.split("<tbody>")[-1])
    assert len(cells) == 5 and "<code>" not in cells[4] and "<em>" not in cells[4]
    assert "a|b `code` &lt;script&gt;" in cells[4]
    assert "<script>" not in page.replace("&lt;script&gt;", "")
    assert page.count("</details>") == 1  # the one in the command stayed in its block
    assert fenced("a ```` b").startswith("`````\n")


def test_inline_is_one_bounded_line() -> None:
    assert inline("a\nb\r\tc") == "a b c"
    assert len(inline("x" * 10_000, 50)) == 50
    assert inline("1.5 - #3 (ok)!") == "1.5 - #3 (ok)!"  # nothing over-escaped


def test_the_summary_stays_under_github_s_limit() -> None:
    """Three hundred failing cases with megabyte-long evidence and commands: the summary
    keeps under its budget and says what it left to the JSON report."""
    rule = CATALOG.get("USAGE-001")
    huge = "y" * (1 << 20)
    finding = Finding(huge, expected=huge, actual=huge, evidence=huge, curl="curl " + huge)
    results = tuple(RuleResult(rule, Verdict.FAIL, huge, finding) for _ in range(300))
    text = markdown_summary(RunResult(TARGET, results))
    assert len(text.encode()) <= MAX_BYTES
    assert "Not shown here" in text and "the JSON report (--json) has them all" in text


def test_the_summary_goes_to_the_flag_and_to_the_step_summary_whenever_set() -> None:
    """``--markdown`` is written and the step summary appended, each alone or both; an empty
    ``$GITHUB_STEP_SUMMARY`` opts out; the flag naming the step summary appends it once."""
    environ = {"GITHUB_STEP_SUMMARY": "/gh/summary.md"}
    step = (Path("/gh/summary.md"), True)
    assert summary_destinations("out.md", environ) == ((Path("out.md"), False), step)
    assert summary_destinations(None, environ) == (step,)
    assert summary_destinations("out.md", {}) == ((Path("out.md"), False),)
    assert summary_destinations(None, {}) == ()
    assert summary_destinations(None, {"GITHUB_STEP_SUMMARY": ""}) == ()
    assert summary_destinations("out.md", {"GITHUB_STEP_SUMMARY": ""}) == (
        (Path("out.md"), False),)
    assert summary_destinations("/gh/../gh/summary.md", environ) == (step,)


def test_run_writes_the_file_and_appends_to_the_step_summary_either_way(
    mock: EmbeddedMock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    step = tmp_path / "step_summary.md"
    step.write_text("# an earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    args = ["run", "--base-url", mock.openai_url, "-q", "--select", "USAGE-*",
            "--header", "X-Mock-Fault: usage-total-wrong"]
    own = tmp_path / "summary.md"
    status, _, err = cli(*args, "--markdown", str(own))
    assert status == 1, err
    written = own.read_text(encoding="utf-8")
    assert written.startswith("## completions conformance: ❌ FAILED")
    assert step.read_text(encoding="utf-8") == "# an earlier step\n\n" + written  # the job too
    status, _, err = cli(*args)  # no file given: the step summary alone
    assert status == 1, err
    summary = step.read_text(encoding="utf-8")
    assert summary.startswith("# an earlier step\n")
    assert summary.count("## completions conformance: ❌ FAILED") == 2
    assert summary.count("`USAGE-001`") == 2 and "usage-total-wrong" not in summary
    assert own.read_text(encoding="utf-8") == written


def test_fuzz_appends_its_summary_with_the_seed(
    mock: EmbeddedMock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    step = tmp_path / "step_summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    status, _, err = cli("fuzz", "--base-url", mock.openai_url, "--max-examples", "5",
                         "--seed", "1", "--phases", "fuzzing", "-q",
                         "--header", "X-Mock-Fault: usage-total-wrong")
    assert status == 1, err
    summary = step.read_text(encoding="utf-8")
    assert summary.lstrip().startswith("## conformance fuzz: ❌ FAILED")
    assert "seed: 1" in summary and "### Failures" in summary and "```sh\ncurl " in summary
