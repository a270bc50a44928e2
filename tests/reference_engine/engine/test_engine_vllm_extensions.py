"""vLLM's extensions in the engine: each does what vLLM documents, streamed as not, and the
answers stay functions of the request."""

from __future__ import annotations

from typing import Any

import pytest

from reference_engine import Engine, GenerationRequest
from reference_engine.results import FinishEvent, TextEvent, VllmChoice
from reference_engine.sampling import SamplingParams

ENDING = "It was going to be a fine"
LOOPING = "Example:"


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine()


def greedy(prompt: str, **fields: Any) -> GenerationRequest:
    defaults: dict[str, Any] = {"sampling": SamplingParams(temperature=0), "max_tokens": 16,
                                "vllm_fields": True}
    return GenerationRequest(prompts=(prompt,), **{**defaults, **fields})


def streamed_text(engine: Engine, request: GenerationRequest) -> str:
    return "".join(e.text for e in engine.stream(request)
                   if isinstance(e, (TextEvent, FinishEvent)))


def test_ignore_eos_runs_to_max_tokens(engine: Engine) -> None:
    early = engine.complete(greedy(ENDING)).choices[0]
    kept = engine.complete(greedy(ENDING, ignore_eos=True)).choices[0]
    assert early.completion_tokens < 16 == kept.completion_tokens
    assert kept.text.startswith(early.text) and kept.finish_reason == "length"
    assert engine.tokenizer.eot_id not in kept.token_ids


def test_a_stop_token_ends_the_choice_and_is_its_stop_reason(engine: Engine) -> None:
    baseline = engine.complete(greedy(LOOPING, logprobs=0)).choices[0]
    assert baseline.logprobs is not None
    token = baseline.token_ids[2]
    texts = [entry.token for entry in baseline.logprobs]
    for include, expected in ((False, "".join(texts[:2])), (True, "".join(texts[:3]))):
        request = greedy(LOOPING, stop_token_ids=(token,), include_stop_str_in_output=include)
        choice = engine.complete(request).choices[0]
        assert isinstance(choice, VllmChoice)
        assert (choice.text, choice.finish_reason, choice.stop_reason) == (expected, "stop",
                                                                          token)
        assert streamed_text(engine, request) == expected


def test_min_tokens_holds_off_stop_tokens(engine: Engine) -> None:
    baseline = engine.complete(greedy(LOOPING)).choices[0]
    token = baseline.token_ids[0]
    held = engine.complete(greedy(LOOPING, stop_token_ids=(token,), sampling=SamplingParams(
        temperature=0, min_tokens=4))).choices[0]
    assert held.completion_tokens >= 4


def test_include_stop_str_in_output_keeps_the_stop_string(engine: Engine) -> None:
    text = engine.complete(greedy(LOOPING)).choices[0].text
    stop = text[8:11]
    cut = text.index(stop)
    for include, expected in ((False, text[:cut]), (True, text[:cut + len(stop)])):
        request = greedy(LOOPING, stop=(stop,), include_stop_str_in_output=include)
        choice = engine.complete(request).choices[0]
        assert isinstance(choice, VllmChoice)
        assert (choice.text, choice.stop_reason) == (expected, stop)
        assert streamed_text(engine, request) == expected


def test_tokens_as_ids_rename_only_the_tokens(engine: Engine) -> None:
    plain = engine.complete(greedy(LOOPING, logprobs=2)).choices[0]
    named = engine.complete(greedy(LOOPING, logprobs=2, tokens_as_ids=True)).choices[0]
    assert plain.logprobs is not None and named.logprobs is not None
    assert named.text == plain.text
    assert [e.token for e in named.logprobs] == [f"token_id:{t}" for t in named.token_ids]
    assert [e.logprob for e in named.logprobs] == [e.logprob for e in plain.logprobs]
    assert all(key.startswith("token_id:") for e in named.logprobs for key in e.top or {})


def test_prompt_logprobs_rank_every_prompt_token(engine: Engine) -> None:
    request = greedy(ENDING, max_tokens=1, prompt_logprobs=2)
    completion = engine.complete(request)
    choice = completion.choices[0]
    assert isinstance(choice, VllmChoice) and choice.prompt_logprobs is not None
    positions = choice.prompt_logprobs
    prompt_ids = engine.tokenizer.encode(ENDING)
    assert len(positions) == completion.usage.prompt_tokens == len(prompt_ids)
    assert positions[0] is None
    for token, ranked in zip(prompt_ids[1:], positions[1:], strict=True):
        assert ranked is not None and ranked[0].token_id == token
        assert {entry.rank for entry in ranked} >= {1, 2} and len(ranked) <= 3
        assert all(entry.logprob <= 0 for entry in ranked)
    again = engine.complete(request).choices[0]  # deterministic
    assert isinstance(again, VllmChoice) and again.prompt_logprobs == positions


def test_without_vllm_fields_choices_stay_plain(engine: Engine) -> None:
    request = GenerationRequest(prompts=(LOOPING,), sampling=SamplingParams(temperature=0),
                                stop=("def",))
    assert type(engine.complete(request).choices[0]).__name__ == "Choice"
