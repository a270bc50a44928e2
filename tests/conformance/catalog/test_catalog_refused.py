"""A valid request the server refuses fails the rules that judge it, not only ERRORS-008: the
behaviour they require did not happen. The finding names the exchange and the way to state
that the server lacks the feature (``--no-feature``), after which the rules SKIP as "feature
not claimed" and nothing fails."""

from __future__ import annotations

import asyncio
import dataclasses

from harness_support import not_passing, settings_for

from conformance.embedded import EmbeddedMock
from conformance.model import Level, RunResult, Verdict
from conformance.rules import CATALOG
from conformance.runner import execute

PROMPT_LIST_RULES = ("INDICES-003", "INDICES-004", "USAGE-007")


def run(mock: EmbeddedMock, *, without: frozenset[str] = frozenset(),
        faults: tuple[str, ...] = ("prompt-list-500",)) -> RunResult:
    settings = settings_for(mock.url_for("openai"), "openai", faults=faults)
    settings = dataclasses.replace(settings, features=settings.features - without)
    return asyncio.run(execute(settings, CATALOG.select(profile=settings.profile)))


def test_a_refused_prompt_list_fails_the_rules_of_prompt_lists(mock: EmbeddedMock) -> None:
    result = run(mock)
    by_id = {r.rule.id: r for r in result.results}
    for rule_id in PROMPT_LIST_RULES:
        found = by_id[rule_id]
        want = Verdict.FAIL if found.rule.level is Level.MUST else Verdict.NON_STRICT
        assert found.verdict is want, found.message
        assert "refused with HTTP 500" in found.message and "--no-feature" in found.message
        assert found.finding is not None and found.finding.exchange is not None
        assert found.finding.exchange.startswith("batch/")


def test_a_server_said_to_lack_prompt_lists_fails_nothing_for_it(mock: EmbeddedMock) -> None:
    result = run(mock, without=frozenset({"prompt_lists"}))
    assert not_passing(result) == {}
    skipped = {r.rule.id: r.message for r in result.results if r.rule.id in PROMPT_LIST_RULES}
    assert all("feature not claimed" in reason for reason in skipped.values()), skipped


def test_a_form_refused_for_its_own_reason_fails_errors_008_alone(mock: EmbeddedMock) -> None:
    """vLLM refuses ``n > 1`` at temperature 0: ERRORS-008 fails that, and the rules of prompt
    lists judge the batch's sampled retry instead of failing the same refusal again."""
    result = run(mock, faults=("greedy-n-refused",))
    assert not_passing(result) == {"ERRORS-008": "FAIL: 2 valid request(s) did not get 2xx: "
                                                 "batch/ns (400), batch/s (400)"}
    by_id = {r.rule.id: r for r in result.results}
    assert all(by_id[rule_id].verdict is Verdict.PASS for rule_id in PROMPT_LIST_RULES)


def test_the_retry_is_judged(mock: EmbeddedMock) -> None:
    result = run(mock, faults=("greedy-n-refused", "prompts-swapped"))
    swapped = next(r for r in result.results if r.rule.id == "INDICES-003")
    assert swapped.verdict is Verdict.FAIL, swapped.message
    assert swapped.finding is not None and swapped.finding.exchange == "batch/ns_sampled"
