"""Accepted deviations (``conformance run --baseline``, ``conformance baseline``): a server's
known FAILs keep a run green, a new one fails it, and a fixed one is named so the file
shrinks. Matched by rule and case, as ``conformance diff`` matches them."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml

from conformance.cli import main
from conformance.compare.baseline import load_baseline
from conformance.target.embedded import EmbeddedMock

LAB = Path(__file__).resolve().parents[2] / "fixtures" / "lab"
RULES = ("--select", "USAGE-*,SSE-*", "-q")
BEFORE = "X-Mock-Fault: usage-before-finish"
BOTH = "X-Mock-Fault: usage-before-finish,usage-total-wrong"


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def mock() -> EmbeddedMock:
    with EmbeddedMock() as started:
        yield started  # type: ignore[misc]


@pytest.fixture(scope="module")
def fault_report(mock: EmbeddedMock, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("baseline") / "fault.json"
    status, _, err = cli("run", "--base-url", mock.openai_url, *RULES, "--header", BEFORE,
                         "--json", str(path))
    assert status == 1, err
    return path


@pytest.mark.parametrize("kind", ["report", "yaml"])
def test_known_failures_pass_and_one_more_fails(mock: EmbeddedMock, fault_report: Path,
                                                tmp_path: Path, kind: str) -> None:
    baseline = fault_report
    if kind == "yaml":
        baseline = tmp_path / "accepted.yaml"
        assert cli("baseline", str(fault_report), "-o", str(baseline))[0] == 0
        assert yaml.safe_load(baseline.read_text())["accepted"] == {
            "USAGE-005/greedy/s": "the usage chunk comes before a finish chunk"}
    status, out, _ = cli("run", "--base-url", mock.openai_url, *RULES, "--header", BEFORE,
                         "--baseline", str(baseline))
    assert status == 0, out
    assert "1 failing rule(s) accepted (USAGE-005)" in out
    assert "no failure beyond the baseline" in out
    status, out, _ = cli("run", "--base-url", mock.openai_url, *RULES, "--header", BOTH,
                         "--baseline", str(baseline))
    assert status == 1, out
    assert "not in the baseline: USAGE-001: these fail the run" in out


def test_a_fixed_deviation_is_named_for_removal(mock: EmbeddedMock, fault_report: Path) -> None:
    status, out, _ = cli("run", "--base-url", mock.openai_url, *RULES,
                         "--baseline", str(fault_report))
    assert status == 0
    assert "no longer failing (remove them from the baseline): USAGE-005/greedy/s" in out


def test_a_rule_entry_accepts_every_case_and_a_case_entry_only_its_own(tmp_path: Path) -> None:
    path = tmp_path / "b.yaml"
    path.write_text("accepted:\n  ERRORS-001: lenient by design\n"
                    "  ERRORS-002/invalid/a status: known\n")
    baseline = load_baseline(path)
    assert baseline.accepts("ERRORS-001", ["invalid/x status", "invalid/y status"])
    assert baseline.accepts("ERRORS-002", ["invalid/a status"])
    assert not baseline.accepts("ERRORS-002", ["invalid/a status", "invalid/b status"])
    assert not baseline.accepts("ERRORS-002", [])  # an ERROR has no case: only a rule entry


@pytest.mark.parametrize(("content", "says"), [
    (None, "cannot read the baseline"),
    ("accepted: [1, 2]", "has no 'accepted:' mapping"),
    ("a: [", "neither a JSON report nor YAML"),
])
def test_a_bad_baseline_is_one_line_before_anything_is_sent(
        tmp_path: Path, content: str | None, says: str) -> None:
    path = tmp_path / "b.yaml"
    if content is not None:
        path.write_text(content)
    status, out, err = cli("run", "--base-url", "http://127.0.0.1:9/v1", "--baseline",
                           str(path))
    assert status == 2 and out == "" and says in err and len(err.splitlines()) == 1


def test_a_replayed_lab_server_passes_against_its_own_report(tmp_path: Path) -> None:
    """llama-cpp-python's FAILs (a replay of its recording), accepted by that run's report:
    the next run exits 0; with one more deviation the recording does not have, it exits 1."""
    entry = yaml.safe_load((LAB / "verdicts.yaml").read_text())["llama-cpp-python-openai"]
    report = tmp_path / "llama.json"
    with EmbeddedMock(["--replay", str(LAB / entry["fixture"]), "--replay-timing",
                       "none"]) as replay:
        base_url = replay.openai_url.rsplit("/v1", 1)[0] + entry["base_path"]
        first = cli("run", "-q", "--base-url", base_url, *entry["args"], "--json", str(report))
        assert first[0] == 1, first[2]
        status, out, _ = cli("run", "-q", "--base-url", base_url, *entry["args"],
                             "--baseline", str(report))
    assert status == 0, out
    assert "no failure beyond the baseline" in out and "not in the baseline" not in out
    accepted = load_baseline(report)
    assert "ERRORS-008" not in accepted.rules and "ERRORS-008" in accepted.cases
    narrower = tmp_path / "narrower.yaml"  # one accepted case fewer: that rule fails again
    entries = [key for key in accepted.entries() if not key.startswith("MODELS-001/")]
    narrower.write_text(yaml.safe_dump({"accepted": {key: "known" for key in entries}}))
    with EmbeddedMock(["--replay", str(LAB / entry["fixture"]), "--replay-timing",
                       "none"]) as replay:
        base_url = replay.openai_url.rsplit("/v1", 1)[0] + entry["base_path"]
        status, out, _ = cli("run", "-q", "--base-url", base_url, *entry["args"],
                             "--baseline", str(narrower))
    assert status == 1 and "not in the baseline: MODELS-001" in out


FUZZ = ("fuzz", "--model", "reference-ngram", "--max-examples", "15", "--seed", "1",
        "--workers", "1", "-q", "--select", "USAGE-*,SSE-*", "--phases", "examples,fuzzing")
TOTAL = "X-Mock-Fault: usage-total-wrong"


def test_fuzz_takes_a_baseline_as_run_does(mock: EmbeddedMock, tmp_path: Path) -> None:
    """Accepted findings exit 0, a finding of a rule not accepted exits 1, and an accepted
    deviation that no longer fails is named."""
    accepted = tmp_path / "accepted.yaml"
    accepted.write_text("accepted:\n  USAGE-001: our totals are off by one (ticket 7)\n")
    fuzz = (*FUZZ, "--base-url", mock.openai_url, "--baseline", str(accepted))
    status, out, err = cli(*fuzz, "--header", TOTAL)
    assert status == 0, out + err
    assert "1 failing rule(s) accepted (USAGE-001)" in out
    status, out, err = cli(*fuzz, "--header", TOTAL + ",done-missing")
    assert status == 1, out + err
    assert "not in the baseline: SSE-005: these fail the run" in out
    status, out, err = cli(*fuzz)
    assert status == 0, out + err
    assert "no longer failing (remove them from the baseline): USAGE-001" in out


def test_a_fuzz_report_accepts_its_own_findings_whatever_their_numbers(
    mock: EmbeddedMock, tmp_path: Path
) -> None:
    """A fuzz finding's case is its exchange without the number fuzz gave it (and its path):
    the same search against the same fault finds the same cases, accepted."""
    report = tmp_path / "fuzz.json"
    fuzz = (*FUZZ, "--base-url", mock.openai_url, "--header", TOTAL)
    status, _, err = cli(*fuzz, "--json", str(report))
    assert status == 1, err
    assert load_baseline(report).entries() == [
        "USAGE-001/POST /completions, positive data, HTTP 200, shrunk usage.total_tokens"]
    status, out, err = cli(*fuzz, "--baseline", str(report))
    assert status == 0, out + err
    assert "no failure beyond the baseline" in out
