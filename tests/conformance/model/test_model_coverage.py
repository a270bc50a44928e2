"""Coverage in every report: how many MUST and SHOULD rules were judged, SKIPs by why, and
``--fail-on-skip`` failing a run whose claimed features' MUST rules could not all be judged."""

from __future__ import annotations

import io
import json
from pathlib import Path

from conformance.cli import main
from conformance.model import RuleResult, Verdict
from conformance.model.coverage import (
    BROKEN,
    NOT_CLAIMED,
    NOT_RUN,
    UNMET,
    coverage_of,
    skip_group,
)
from conformance.rules import CATALOG
from conformance.target.embedded import EmbeddedMock


def cli(*argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue()


def test_skip_reasons_fall_in_four_groups() -> None:
    assert skip_group("feature not claimed: echo") == NOT_CLAIMED
    assert skip_group("probe echo skipped: feature not claimed: echo") == NOT_CLAIMED
    assert skip_group("stop/ns was not sent: no stop string could be chosen") == NOT_RUN
    assert skip_group("probe seeded was not run") == NOT_RUN
    assert skip_group("batch/ns answered HTTP 500, not 200 (judged by ERRORS-008)") == BROKEN
    assert skip_group("no usage was streamed (USAGE-003)") == BROKEN
    assert skip_group("the two prompts have the same greedy text") == UNMET
    # with the run's failing rules known, a named judge counts only when it did fail
    failing = frozenset({"USAGE-003", "USAGE", "INDICES-002", "INDICES"})
    assert skip_group("no usage was streamed (USAGE-003)", failing) == BROKEN
    assert skip_group("x: no chunk for choice indices [0] (judged by FINISH / INDICES rules)",
                      failing) == BROKEN
    assert skip_group("no usage chunk (USAGE-004)", failing) == UNMET
    assert skip_group("ban was not sent: no vocabulary (ECHO-005)", failing) == NOT_RUN


def test_coverage_counts_judged_rules_by_level_and_skips_by_group() -> None:
    must = [r for r in CATALOG if str(r.level) == "MUST"][:4]
    should = next(r for r in CATALOG if str(r.level) == "SHOULD")
    results = [
        RuleResult(must[0], Verdict.PASS), RuleResult(must[1], Verdict.FAIL, "x"),
        RuleResult(must[2], Verdict.SKIP, "feature not claimed: n"),
        RuleResult(must[3], Verdict.SKIP, f"it needs what {must[1].id} judges"),
        RuleResult(should, Verdict.ERROR, "harness error"),
    ]
    coverage = coverage_of(results)
    assert coverage.judged["MUST"] == 2 and coverage.total["MUST"] == 4
    assert coverage.judged["SHOULD"] == 0 and coverage.total["SHOULD"] == 1
    assert coverage.skipped == {NOT_CLAIMED: 1, BROKEN: 1, NOT_RUN: 0, UNMET: 0}
    assert coverage.unjudged_must == (must[3].id,)
    assert coverage.line() == ("judged: MUST 2 of 4, SHOULD 0 of 1; skipped: 1 feature not "
                               "claimed, 1 prerequisite broken")


def test_fail_on_skip_fails_a_run_whose_must_rule_could_not_be_judged(
    mock: EmbeddedMock, tmp_path: Path
) -> None:
    # USAGE-005 judges the usage chunk, which this fault leaves out: it SKIPs, nothing fails
    # (USAGE-003, which owns that defect, is not selected)
    target = ["run", "-q", "--base-url", mock.openai_url, "--select", "USAGE-005",
              "--header", "X-Mock-Fault: usage-missing"]
    status, out = cli(*target)
    assert status == 0 and "--fail-on-skip would fail the run): USAGE-005" in out
    report = tmp_path / "r.json"
    status, out = cli(*target, "--fail-on-skip", "--json", str(report))
    assert status == 1 and "FAILED" in out
    coverage = json.loads(report.read_text())["coverage"]
    assert coverage["unjudged_must"] == ["USAGE-005"] and coverage["fail_on_skip"] is True
    # a feature the server does not claim is not a hole
    status, out = cli("run", "-q", "--base-url", mock.openai_url, "--select", "ECHO-*",
                      "--no-feature", "echo", "--fail-on-skip")
    assert status == 0 and "feature not claimed" in out
