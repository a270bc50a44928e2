"""Ids from the text (issue 50): a server that answers ``logprobs: 0`` with no logprobs object
(llama.cpp's server) but serves ``POST /tokenize`` gets logit_bias and the penalties judged all
the same, the ids of its answers taken from their text through its tokenizer; and a greedy
answer that repeats late, or only after a repeated phrase, is still found for the penalties."""

from __future__ import annotations

import asyncio

from harness_support import run_catalog, settings_for
from repeating_server import RepeatingServer, start

import spec
from conformance.model import RunResult
from conformance.rules import CATALOG
from conformance.run.runner import execute
from conformance.target.embedded import EmbeddedMock

JUDGED = ("LOGPROBS-002", "PARAMS-002", "PARAMS-003", "SAMPLING-001", "SAMPLING-002")


def run(server: RepeatingServer) -> RunResult:
    async def main() -> RunResult:
        runner, url = await start(server)
        try:
            settings = settings_for(url, "openai")
            rules = CATALOG.select(profile=settings.profile, select=list(JUDGED))
            return await execute(settings, rules)
        finally:
            await runner.cleanup()

    return asyncio.run(main())


def verdicts(result: RunResult) -> dict[str, str]:
    return {r.rule.id: r.verdict.value for r in result.results}


def repeating(result: RunResult) -> str:
    """Which greedy try the penalized requests followed (the same prompt and max_tokens)."""
    penalized = result.exchanges["penalties/presence"].request.json()
    assert isinstance(penalized, dict)
    for key in ("greedy", "greedy-longer", "greedy-phrase"):
        greedy = result.exchanges[f"penalties/{key}"].request.json()
        assert isinstance(greedy, dict)
        if all(greedy[f] == penalized[f] for f in ("prompt", "max_tokens")):
            return key
    raise AssertionError("the penalized requests follow no greedy try")


def test_a_server_without_logprobs_tokens_is_judged_through_its_tokenizer() -> None:
    honest = run(RepeatingServer(distinct=20))
    assert verdicts(honest) == {"LOGPROBS-002": "FAIL", "PARAMS-002": "PASS",
                                "PARAMS-003": "PASS", "SAMPLING-001": "PASS",
                                "SAMPLING-002": "PASS"}
    deaf = run(RepeatingServer(distinct=20, honours=False))
    assert verdicts(deaf) == {"LOGPROBS-002": "FAIL", "PARAMS-002": "FAIL",
                              "PARAMS-003": "FAIL", "SAMPLING-001": "NON_STRICT",
                              "SAMPLING-002": "NON_STRICT"}
    assert repeating(deaf) == "greedy-longer"  # 20 distinct words: no repeat within 16


def test_an_answer_repeating_after_its_16th_token_is_penalized() -> None:
    """The issue's server: 12 words, then " water since came take water since came take":
    its 16 greedy tokens say the loop once, so the 64-token try is the one that repeats."""
    assert repeating(run(RepeatingServer(distinct=12))) == "greedy-longer"
    assert repeating(run(RepeatingServer(distinct=8))) == "greedy"
    deaf = verdicts(run(RepeatingServer(distinct=12, honours=False)))
    assert (deaf["SAMPLING-001"], deaf["SAMPLING-002"]) == ("NON_STRICT", "NON_STRICT")


def test_a_phrase_said_again_and_again_invites_a_repeat() -> None:
    honest = run(RepeatingServer(phrase_only=True))
    assert repeating(honest) == "greedy-phrase"
    assert (verdicts(honest)["SAMPLING-001"], verdicts(honest)["SAMPLING-002"]) == (
        "PASS", "PASS")
    deaf = verdicts(run(RepeatingServer(phrase_only=True, honours=False)))
    assert (deaf["SAMPLING-001"], deaf["SAMPLING-002"]) == ("NON_STRICT", "NON_STRICT")


def test_the_skip_says_what_was_tried() -> None:
    result = run(RepeatingServer(distinct=200))
    skips = {r.rule.id: r.message for r in result.results if r.verdict.value == "SKIP"}
    assert set(skips) == {"SAMPLING-001", "SAMPLING-002"}
    assert skips["SAMPLING-001"] == (
        "no greedy answer repeats one of its tokens: tried 16 tokens of 'Example:' (no token "
        "repeated); 64 tokens of 'Example:' (no token repeated); 64 tokens of a phrase said "
        "four times (no token repeated)")
    assert "penalties/presence" not in result.exchanges


def test_the_mock_without_logprobs_is_judged_through_its_tokenizer(mock: EmbeddedMock) -> None:
    """``mockserver --fault logprobs-missing`` answers no logprobs and serves ``/tokenize``:
    logit_bias and the penalties are judged there, and fail when the mock ignores them."""
    def judged(*faults: str) -> dict[str, str]:
        result = run_catalog(mock.url_for(spec.get_profile("openai")), "openai", faults=faults,
                             select=list(JUDGED))
        return {r.rule.id: r.verdict.value for r in result.results}

    assert judged("logprobs-missing") == {
        "LOGPROBS-002": "FAIL", "PARAMS-002": "PASS", "PARAMS-003": "PASS",
        "SAMPLING-001": "PASS", "SAMPLING-002": "PASS"}
    assert judged("logprobs-missing", "logit-bias-ignored", "penalties-ignored") == {
        "LOGPROBS-002": "FAIL", "PARAMS-002": "FAIL", "PARAMS-003": "FAIL",
        "SAMPLING-001": "NON_STRICT", "SAMPLING-002": "NON_STRICT"}
