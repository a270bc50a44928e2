"""Each rule's share of a run's time (:mod:`conformance.model.timing`), read by the pytest
plugin for the items' durations."""

from __future__ import annotations

import dataclasses

import pytest
from harness_support import json_exchange, rule

from conformance.model import RuleResult, RunResult, RunStats, Target, Verdict
from conformance.model.timing import rule_seconds
from conformance.transport import Exchange, Timings

TARGET = Target("http://example.test/v1", "openai", "m", ())


def timed(seconds: float) -> Exchange:
    return dataclasses.replace(json_exchange({}), timings=Timings(0.0, ended_at=seconds))


def test_a_shared_exchange_is_split_among_its_readers_and_the_shares_add_up() -> None:
    results = (
        RuleResult(rule("USAGE-001"), Verdict.PASS, exchanges=("p/shared", "p/own")),
        RuleResult(rule("USAGE-002"), Verdict.PASS, exchanges=("p/shared",)),
        RuleResult(rule("USAGE-003"), Verdict.SKIP, "feature not claimed"),
    )
    exchanges = {"p/shared": timed(2.0), "p/own": timed(1.0)}
    result = RunResult(TARGET, results, exchanges, RunStats(wall_seconds=1.5))
    shares = rule_seconds(result)
    # weights 1 + 2/2 = 2 and 2/2 = 1 of 3, scaled to the 1.5 s the run took
    assert shares == pytest.approx({"USAGE-001": 1.0, "USAGE-002": 0.5, "USAGE-003": 0.0})


def test_without_timed_exchanges_the_run_is_split_evenly() -> None:
    results = tuple(RuleResult(rule(rule_id), Verdict.SKIP) for rule_id in ("SSE-001", "SSE-002"))
    shares = rule_seconds(RunResult(TARGET, results, {}, RunStats(wall_seconds=1.0)))
    assert shares == {"SSE-001": 0.5, "SSE-002": 0.5}
    assert rule_seconds(RunResult(TARGET, ())) == {}
