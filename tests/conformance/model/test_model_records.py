"""The rule and result model: records, the registry, verdicts."""

from __future__ import annotations

import pytest

import spec
from conformance.model import (
    Level,
    Registry,
    Rule,
    RuleResult,
    RunResult,
    SourceKind,
    Target,
    Verdict,
)


def _noop(ctx: object) -> None:
    return None


def make_rule(rule_id: str = "TEST-001", level: Level = Level.MUST) -> Rule:
    return Rule(rule_id, level, "title", "requirement", "spec/x", SourceKind.SPEC, _noop)


def test_registry_refuses_duplicate_ids() -> None:
    registry = Registry()
    registry.add(make_rule())
    with pytest.raises(ValueError, match="registered twice"):
        registry.add(make_rule())


def test_rule_ids_must_be_area_number() -> None:
    for bad in ("SSE-1", "sse-001", "SSE001", "SSE-0001", "-001"):
        with pytest.raises(ValueError, match="AREA-NNN"):
            make_rule(bad)
    assert make_rule("CONTENT-TYPE-003").area == "CONTENT-TYPE"


def test_rules_select_profiles_by_traits_some_profile_has() -> None:
    with pytest.raises(ValueError, match="no profile has the traits"):
        Rule("X-001", Level.MUST, "t", "r", "c", SourceKind.SPEC, _noop, traits=("wire=x",))
    friendli_only = Rule("X-001", Level.MUST, "t", "r", "c", SourceKind.SPEC, _noop,
                         traits=("wire=friendli",))
    assert friendli_only.applies_to(spec.get_profile("friendli"))
    assert not friendli_only.applies_to(spec.get_profile("openai"))


def test_select_by_id_and_glob_case_insensitively() -> None:
    registry = Registry()
    for rule_id in ("SSE-001", "SSE-002", "USAGE-001"):
        registry.add(make_rule(rule_id))
    assert [r.id for r in registry.select(select=["sse-*"])] == ["SSE-001", "SSE-002"]
    assert [r.id for r in registry.select(deselect=["SSE-002"])] == ["SSE-001", "USAGE-001"]
    assert [r.id for r in registry] == ["SSE-001", "SSE-002", "USAGE-001"]


def test_sorting_is_numeric_within_an_area() -> None:
    registry = Registry()
    for rule_id in ("A-010", "A-002", "A-001"):
        registry.add(make_rule(rule_id))
    assert [r.id for r in registry] == ["A-001", "A-002", "A-010"]


def test_verdicts_fail_a_run_only_when_they_should() -> None:
    assert Verdict.FAIL.fails() and Verdict.ERROR.fails()
    assert not Verdict.NON_STRICT.fails() and Verdict.NON_STRICT.fails(strict=True)
    assert not Verdict.PASS.fails(strict=True) and not Verdict.SKIP.fails(strict=True)


def test_run_result_counts_and_exit_code() -> None:
    target = Target("http://x/v1", "openai", "m", ())
    results = (
        RuleResult(make_rule("A-001"), Verdict.PASS),
        RuleResult(make_rule("A-002", Level.SHOULD), Verdict.NON_STRICT, "x"),
        RuleResult(make_rule("B-001"), Verdict.SKIP, "n/a"),
    )
    lenient = RunResult(target, results)
    assert lenient.exit_code == 0 and lenient.counts()[Verdict.NON_STRICT] == 1
    assert RunResult(target, results, strict=True).exit_code == 1
    assert list(lenient.by_area()) == ["A", "B"]
    assert [r.rule.id for r in lenient.failures()] == ["A-002"]
