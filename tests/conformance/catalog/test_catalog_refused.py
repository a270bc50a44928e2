"""A valid request the server fails (a 5xx) is ERRORS-008's finding alone, the rules that
needed it SKIP naming ERRORS-008; a server said to lack the feature (``--no-feature``) fails
nothing for it; a form the server refuses for a reason of its own is retried in another form."""

from __future__ import annotations

import asyncio
import dataclasses

from harness_support import not_passing, settings_for

import spec
from conformance.model import RunResult, Verdict
from conformance.rules import CATALOG
from conformance.run.runner import execute
from conformance.target.embedded import EmbeddedMock

PROMPT_LIST_RULES = ("INDICES-003", "INDICES-004", "USAGE-007")


def run(mock: EmbeddedMock, *, without: frozenset[str] = frozenset(),
        faults: tuple[str, ...] = ("prompt-list-500",)) -> RunResult:
    settings = settings_for(mock.url_for(spec.get_profile("openai")), "openai", faults=faults)
    settings = dataclasses.replace(settings, features=settings.features - without)
    return asyncio.run(execute(settings, CATALOG.select(profile=settings.profile)))


def test_a_prompt_list_failed_with_a_5xx_is_errors_008s_alone(mock: EmbeddedMock) -> None:
    """One cause, one finding: the server broke on a valid request (HTTP 500), so ERRORS-008
    fails it, a case each, and the rules of prompt lists SKIP naming ERRORS-008 (a refusal
    for the request's form, a 400, still fails them: tests/conformance/run/
    test_runner_one_cause.py)."""
    result = run(mock)
    failing = not_passing(result)
    assert set(failing) == {"ERRORS-008"}, failing
    by_id = {r.rule.id: r for r in result.results}
    for rule_id in PROMPT_LIST_RULES:
        found = by_id[rule_id]
        assert found.verdict is Verdict.SKIP, found.message
        assert "HTTP 500" in found.message and "ERRORS-008" in found.message, found.message


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
