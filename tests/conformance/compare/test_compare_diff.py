"""``conformance diff``: two reports of a server, what got worse, better, newly skipped or
newly judged; findings matched by case (rule, exchange, path), never by wording."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import main
from conformance.compare import ChangeKind, diff_reports, load_report
from conformance.target.embedded import EmbeddedMock

REPO = Path(__file__).resolve().parents[3]
LAB = REPO / "tests" / "fixtures" / "lab"


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


def finding(exchange: str, message: str = "broken", path: str | None = None) -> dict[str, Any]:
    return {"message": message, "expected": None, "actual": None, "path": path,
            "evidence": None, "exchange": exchange, "curl": f"curl {exchange}"}


def result(rule: str, verdict: str, *findings: dict[str, Any]) -> dict[str, Any]:
    return {"rule": rule, "level": "MUST", "verdict": verdict,
            "message": findings[0]["message"] if findings else "", "area": rule.split("-")[0],
            "title": f"title of {rule}", "finding": findings[0] if findings else None,
            "findings": list(findings), "exchanges": []}


def report(tmp_path: Path, name: str, *results: dict[str, Any]) -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"target": {"base_url": "http://127.0.0.1:8000/v1",
                                           "profile": "openai", "model": "m"},
                                "search": None, "results": list(results)}))
    return str(path)


def kinds(before: str, after: str) -> dict[str, ChangeKind]:
    diff = diff_reports(load_report(before), load_report(after))
    return {change.rule: change.kind for change in diff.changes}


@pytest.fixture(scope="module")
def mock_reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Reports of the mock: clean twice, and with the usage chunk before the finish chunk."""
    folder = tmp_path_factory.mktemp("reports")
    paths = {}
    with EmbeddedMock() as mock:
        for name, extra in (("clean", ()), ("again", ()),
                            ("fault", ("--header", "X-Mock-Fault: usage-before-finish"))):
            paths[name] = str(folder / f"{name}.json")
            status, _, err = cli("run", "--base-url", mock.openai_url, "--select", "USAGE-*,SSE-*",
                                 "-q", "--json", paths[name], *extra)
            assert status in (0, 1), err
    return paths


def test_a_fault_is_one_regression_one_way_and_one_fix_the_other(mock_reports: dict[str, str]
                                                                  ) -> None:
    status, out, _ = cli("diff", mock_reports["clean"], mock_reports["fault"])
    assert status == 1 and out.rstrip().endswith("REGRESSED")
    assert kinds(mock_reports["clean"], mock_reports["fault"]) == {"USAGE-005": ChangeKind.WORSE}
    assert "USAGE-005" in out and "reproduce: curl" in out
    status, out, _ = cli("diff", mock_reports["fault"], mock_reports["clean"])
    assert status == 0 and out.rstrip().endswith("NO REGRESSION")
    assert kinds(mock_reports["fault"], mock_reports["clean"]) == {"USAGE-005": ChangeKind.BETTER}


def test_two_runs_of_one_server_differ_in_nothing(mock_reports: dict[str, str]) -> None:
    status, out, _ = cli("diff", mock_reports["clean"], mock_reports["again"])
    assert status == 0 and "no rule changed" in out


def test_a_reworded_message_is_no_change(mock_reports: dict[str, str], tmp_path: Path) -> None:
    data = json.loads(Path(mock_reports["fault"]).read_text())
    reworded = copy.deepcopy(data)
    for item in reworded["results"]:
        item["message"] = item["message"].upper()
        for found in item["findings"]:
            found["message"] = "said differently: " + found["message"]
    path = tmp_path / "reworded.json"
    path.write_text(json.dumps(reworded))
    assert kinds(mock_reports["fault"], str(path)) == {}


def test_a_new_case_of_a_failing_umbrella_rule_is_a_regression(tmp_path: Path) -> None:
    before = report(tmp_path, "a.json", result("ERRORS-001", "FAIL", finding("invalid/a")))
    after = report(tmp_path, "b.json", result("ERRORS-001", "FAIL", finding("invalid/a"),
                                              finding("invalid/b")))
    diff = diff_reports(load_report(before), load_report(after))
    (change,) = diff.changes
    assert change.kind is ChangeKind.WORSE and [f.case for f in change.new_findings] == [
        "invalid/b"]
    assert kinds(after, before) == {"ERRORS-001": ChangeKind.BETTER}  # one case fewer


def test_the_same_case_at_two_paths_is_two_cases(tmp_path: Path) -> None:
    before = report(tmp_path, "a.json", result("X-001", "FAIL", finding("p/k", path="a")))
    after = report(tmp_path, "b.json", result("X-001", "FAIL", finding("p/k", path="b")))
    assert kinds(before, after) == {"X-001": ChangeKind.WORSE}


def test_fuzz_findings_are_matched_without_their_numbers(tmp_path: Path) -> None:
    label = "POST /completions, negative data, HTTP 500, shrunk"
    before = report(tmp_path, "a.json", result("FUZZ-001", "FAIL", finding(f"fuzz/1: {label}")))
    after = report(tmp_path, "b.json", result("FUZZ-001", "FAIL", finding(f"fuzz/4: {label}")))
    assert kinds(before, after) == {}


def test_skips_and_new_verdicts_are_named_and_only_failures_regress(tmp_path: Path) -> None:
    before = report(tmp_path, "a.json", result("A-001", "PASS"), result("B-001", "SKIP"),
                    result("C-001", "SKIP"), result("D-001", "FAIL", finding("x/y")),
                    result("E-001", "PASS"))
    after = report(tmp_path, "b.json", result("A-001", "SKIP"), result("B-001", "PASS"),
                   result("C-001", "FAIL", finding("x/y")), result("D-001", "SKIP"))
    assert kinds(before, after) == {
        "A-001": ChangeKind.NEWLY_SKIPPED, "B-001": ChangeKind.NEWLY_JUDGED,
        "C-001": ChangeKind.WORSE, "D-001": ChangeKind.NEWLY_SKIPPED,
        "E-001": ChangeKind.NEWLY_SKIPPED}  # no longer in the report


def test_the_diff_as_json_and_markdown(mock_reports: dict[str, str], tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    data, summary = tmp_path / "diff.json", tmp_path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    status, _, _ = cli("diff", mock_reports["clean"], mock_reports["fault"], "--json", str(data))
    assert status == 1
    written = json.loads(data.read_text())
    assert written["regressed"] is True
    (change,) = written["changes"]
    assert change["rule"] == "USAGE-005" and change["kind"] == "worse"
    assert change["before"] == "PASS" and change["after"] == "FAIL"
    assert change["new_findings"][0]["curl"].startswith("curl ")
    text = summary.read_text()
    assert "## Conformance diff: regressed" in text and "| USAGE-005 | PASS -> FAIL |" in text
    assert "<details><summary>USAGE-005: reproduce</summary>" in text
    own = tmp_path / "diff.md"  # a file kept as an artifact: the job summary gets it too
    status, _, _ = cli("diff", mock_reports["clean"], mock_reports["fault"],
                       "--markdown", str(own))
    assert status == 1
    assert "\n" + own.read_text() == text  # appended after a blank line, as each step does
    assert summary.read_text() == text + text


def test_lab_recordings_compare_too() -> None:
    status, out, _ = cli("diff", str(LAB / "vllm-openai.json"), str(LAB / "vllm-openai.json"))
    assert status == 0 and "no rule changed" in out
    status, out, _ = cli("diff", str(LAB / "prism-openai.json"), str(LAB / "vllm-openai.json"))
    assert status in (0, 1) and "before: " in out


@pytest.mark.parametrize(("content", "says"), [
    (None, "cannot read"), ("{", "is not JSON"), ('{"a": 1}', "is not a conformance report"),
])
def test_a_file_that_is_not_a_report_is_one_line_and_exit_2(
        tmp_path: Path, content: str | None, says: str) -> None:
    path = tmp_path / "x.json"
    if content is not None:
        path.write_text(content)
    status, out, err = cli("diff", str(path), str(path))
    assert status == 2 and out == "" and says in err and len(err.splitlines()) == 1
