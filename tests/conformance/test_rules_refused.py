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


def run(mock: EmbeddedMock, *, without: frozenset[str] = frozenset()) -> RunResult:
    settings = settings_for(mock.url_for("openai"), "openai", faults=["prompt-list-500"])
    settings = dataclasses.replace(settings, features=settings.features - without)
    return asyncio.run(execute(settings, CATALOG.select(profile="openai")))


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
