"""``conformance matrix``: servers by rules from their reports, as Markdown and HTML, and the
lab's compatibility table written through it."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
import yaml

from conformance.cli import main
from conformance.target.embedded import EmbeddedMock

REPO = Path(__file__).resolve().parents[3]
LAB = REPO / "tests" / "fixtures" / "lab"
COMPATIBILITY = REPO / "docs" / "compatibility.md"
RULES = ("--select", "USAGE-*,SSE-*", "-q")


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def reports(mock: EmbeddedMock, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A clean run of the mock, and one with ``usage-before-finish`` (HTML beside its JSON)."""
    folder = tmp_path_factory.mktemp("matrix")
    clean, faulty = folder / "clean.json", folder / "faulty.json"
    assert cli("run", "--base-url", mock.openai_url, *RULES, "--json", str(clean))[0] == 0
    status, _, err = cli("run", "--base-url", mock.openai_url, *RULES, "--json", str(faulty),
                         "--html", str(folder / "faulty.html"),
                         "--header", "X-Mock-Fault: usage-before-finish")
    assert status == 1, err
    return clean, faulty


def rows(markdown: str) -> dict[str, list[str]]:
    """The table's rows by their first cell's first word (a rule ID or a bold area)."""
    table = {}
    for line in markdown.splitlines():
        if line.startswith("| ") and not line.startswith("| rule "):
            cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
            table[cells[0].split(" ")[0].strip("*")] = cells[1:]
    return table


def test_markdown_names_columns_and_links_each_failure_to_its_finding(
    reports: tuple[Path, Path]
) -> None:
    status, out, err = cli("matrix", *map(str, reports), "--label", "before")
    assert status == 0 and err == ""  # a selection of rules is no other catalog
    table = rows(out)
    assert out.splitlines()[2] == "| rule | before | faulty |"
    assert table["USAGE-005"] == ["PASS", "[FAIL](#faulty-usage-005)"]
    assert table["USAGE-001"] == ["PASS", "PASS"]
    passed = len([r for r in table if r.startswith("USAGE-")])
    assert table["USAGE"] == [f"{passed}/0/0", f"{passed - 1}/1/0"]
    finding = out[out.index('<a id="faulty-usage-005">'):]
    assert "the usage chunk comes before a finish chunk" in finding.splitlines()[0]
    assert "curl " in finding  # the reproduction, folded


def test_html_has_the_reports_colours_and_links_into_the_report_beside(
    reports: tuple[Path, Path], tmp_path: Path
) -> None:
    page = tmp_path / "matrix.html"
    assert cli("matrix", *map(str, reports), "--html", str(page))[0] == 0
    html = page.read_text()
    assert ".FAIL,.FAILED{background:#c62828}" in html  # the HTML report's stylesheet
    faulty_html = Path("..") / reports[1].parent.name / "faulty.html"
    assert '<td class="v FAIL" title="faulty: USAGE-005 FAIL: ' in html
    assert f'href="{faulty_html.as_posix()}#USAGE-005">FAIL</a>' in html
    assert 'id="faulty-usage-005"' in html and "curl " in html  # findings below the table
    assert "<link" not in html and "src=" not in html  # self-contained: opens offline


def test_a_report_of_another_catalog_is_pointed_out(mock: EmbeddedMock, tmp_path: Path) -> None:
    """A full run's report without a rule of today's catalog (or with one it no longer has)
    was judged by another version: the matrix shows it as it is and says --replay."""
    path = tmp_path / "old.json"
    assert cli("run", "--base-url", mock.openai_url, "-q", "--json", str(path))[0] == 0
    data = json.loads(path.read_text())
    data["results"] = [r for r in data["results"] if r["rule"] != "USAGE-005"]
    data["results"].append({**data["results"][0], "rule": "USAGE-999"})
    path.write_text(json.dumps(data))
    status, out, err = cli("matrix", str(path))
    assert status == 0 and "| USAGE-999 " in out
    assert "was judged by another catalog (without USAGE-005; with USAGE-999)" in err
    assert "--replay judges it again" in err


def test_a_report_that_is_no_report_is_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    status, _, err = cli("matrix", str(bad))
    assert status == 2 and "is not a conformance report" in err
    status, _, err = cli("matrix", str(bad), "--label", "a", "--label", "b")
    assert status == 2 and "2 --label for 1 reports" in err


def test_the_lab_recordings_judged_again_give_the_compatibility_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``conformance matrix --replay`` over lab recordings writes the table of
    ``docs/compatibility.md`` (two recordings here; ``lab/run verdicts`` writes all); the runs
    that judge the replays leave the job's step summary alone."""
    step = tmp_path / "step_summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    names = ["litellm-openai", "vllm-vllm"]
    status, out, err = cli("matrix", "--replay", *(str(LAB / f"{n}.json") for n in names))
    assert status == 0, err
    assert not step.exists()
    docs = rows(COMPATIBILITY.read_text(encoding="utf-8"))
    header = next(line for line in COMPATIBILITY.read_text().splitlines()
                  if line.startswith("| rule |"))
    columns = [c.strip() for c in header.strip("|").split("|")][1:]
    wanted = {row: [cells[columns.index(n)] for n in names] for row, cells in docs.items()}
    wanted = {row: cells for row, cells in wanted.items() if any(cells)}
    assert rows(out) == wanted


def test_the_compatibility_table_says_what_the_verdict_table_says() -> None:
    """Every cell of ``docs/compatibility.md`` is the verdict ``verdicts.yaml`` holds (which
    the replays of the recordings assert), and every FAIL there is listed with its why."""
    verdicts = yaml.safe_load((LAB / "verdicts.yaml").read_text(encoding="utf-8"))
    text = COMPATIBILITY.read_text(encoding="utf-8")
    header = next(line for line in text.splitlines() if line.startswith("| rule |"))
    columns = [c.strip() for c in header.strip("|").split("|")][1:]
    assert columns == sorted(verdicts, key=lambda name: verdicts[name]["fixture"])
    table = rows(text)
    for name, entry in verdicts.items():
        for rule, value in entry["rules"].items():
            verdict = value if isinstance(value, str) else value["verdict"]
            cell = table[rule][columns.index(name)]
            assert re.sub(r"^\[|\]\(.*\)$| \(\d+\)", "", cell) == verdict, (name, rule, cell)
            if verdict in ("FAIL", "NON_STRICT"):
                assert f'**{rule}** {verdict}: {" ".join(value["why"].split())}' in text
