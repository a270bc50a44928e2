"""vLLM's ``allowed_token_ids`` and ``truncate_prompt_tokens`` in the engine: the whitelist
holds on every sampled token and shapes the reported logprobs, truncation keeps the last N
prompt tokens for everything downstream, and both answers stay functions of the request."""

from __future__ import annotations

import math
from typing import Any

import pytest

from reference_engine import Engine, GenerationRequest
from reference_engine.errors import InvalidRequestError, TokenIdOutOfRangeError
from reference_engine.results import FinishEvent, TextEvent, VllmChoice
from reference_engine.sampling import SamplingParams

STORY = "Once upon a time there was a little cat who lived in a house by the sea"


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine()


def request(prompt: str | tuple[int, ...] = STORY, *, temperature: float = 1.0,
            allowed: list[int] | None = None, **fields: Any) -> GenerationRequest:
    defaults: dict[str, Any] = {"max_tokens": 12, "seed": 7, "vllm_fields": True}
    sampling = SamplingParams(temperature=temperature, allowed_token_ids=allowed)
    return GenerationRequest(prompts=(prompt,), sampling=sampling, **{**defaults, **fields})


def streamed_text(engine: Engine, generation: GenerationRequest) -> str:
    return "".join(e.text for e in engine.stream(generation)
                   if isinstance(e, (TextEvent, FinishEvent)))


def words(engine: Engine, *texts: str) -> list[int]:
    return sorted({engine.tokenizer.encode(text)[0] for text in texts})


# -- allowed_token_ids ---------------------------------------------------------------------


def test_every_sampled_token_is_a_listed_one_and_the_answer_repeats(engine: Engine) -> None:
    allowed = words(engine, " the", " a", " cat", " sea", ".")
    generation = request(allowed=allowed, logprobs=3)
    choice = engine.complete(generation).choices[0]
    assert choice.completion_tokens == 12 and set(choice.token_ids) <= set(allowed)
    assert engine.complete(generation).choices[0] == choice  # same request + seed: same answer
    assert streamed_text(engine, generation) == choice.text


def test_logprobs_are_those_of_the_masked_distribution(engine: Engine) -> None:
    allowed = words(engine, " the", " a", " cat")
    choice = engine.complete(request(allowed=allowed, logprobs=5)).choices[0]
    assert choice.logprobs
    listed = {engine.tokenizer.token_display(t) for t in allowed}
    for entry in choice.logprobs:
        top = entry.top or {}
        finite = {name: value for name, value in top.items() if value > -9999.0}
        assert set(finite) == listed  # the others are -inf, reported as -9999.0
        assert math.isclose(sum(math.exp(v) for v in finite.values()), 1.0, rel_tol=1e-9)
        assert entry.logprob == top[entry.token]


def test_greedy_picks_the_most_likely_listed_token(engine: Engine) -> None:
    free = engine.complete(request(temperature=0, max_tokens=1, logprobs=4,
                                   tokens_as_ids=True)).choices[0]
    assert free.logprobs and free.logprobs[0].top
    ranked = sorted(free.logprobs[0].top.items(), key=lambda item: -item[1])
    second, third, fourth = (int(name.split(":")[1]) for name, _ in ranked[1:4])
    forced = engine.complete(request(temperature=0, max_tokens=1,
                                     allowed=[fourth, second, third])).choices[0]
    assert forced.token_ids == (second,)


def test_an_id_outside_the_vocabulary_is_refused_with_vllms_words(engine: Engine) -> None:
    with pytest.raises(TokenIdOutOfRangeError,
                       match="allowed_token_ids contains out-of-vocab token id!") as refused:
        engine.complete(request(allowed=[5, engine.vocab_size]))
    assert refused.value.param == "allowed_token_ids"


# -- truncate_prompt_tokens ----------------------------------------------------------------


def test_truncation_keeps_the_last_tokens_for_usage_and_generation(engine: Engine) -> None:
    kept = tuple(engine.tokenizer.encode(STORY))[-5:]
    truncated = engine.complete(request(truncate_prompt_tokens=5))
    assert truncated.usage.prompt_tokens == 5
    assert truncated == engine.complete(request(kept))  # as if the kept tokens were sent


def test_echo_returns_the_prompt_as_sent_with_entries_for_the_kept_tokens(
        engine: Engine) -> None:
    ids = tuple(engine.tokenizer.encode(STORY))
    choice = engine.complete(request(truncate_prompt_tokens=5, echo=True, logprobs=0,
                                     max_tokens=3)).choices[0]
    generated = engine.complete(request(ids[-5:], max_tokens=3)).choices[0].text
    assert choice.text == STORY + generated and choice.logprobs is not None
    prompt_entries = choice.logprobs[:5]
    kept_text = engine.tokenizer.decode(list(ids[-5:]))
    assert "".join(e.token for e in prompt_entries) == kept_text
    assert prompt_entries[0].logprob is None
    for entry in choice.logprobs:  # each token at its place in the echoed text
        assert choice.text[entry.offset:].startswith(entry.token)
    assert prompt_entries[0].offset == len(STORY) - len(kept_text)


def test_truncation_applies_to_token_prompts_and_prompt_logprobs(engine: Engine) -> None:
    ids = tuple(engine.tokenizer.encode(STORY))
    completion = engine.complete(request(ids, truncate_prompt_tokens=4, prompt_logprobs=1,
                                         max_tokens=1, echo=True))
    choice = completion.choices[0]
    assert choice.text.startswith(STORY)  # the prompt as sent, decoded whole (as vLLM does)
    assert isinstance(choice, VllmChoice) and choice.prompt_logprobs is not None
    assert completion.usage.prompt_tokens == len(choice.prompt_logprobs) == 4
    assert choice.prompt_logprobs[0] is None
    assert [ranked[0].token_id for ranked in choice.prompt_logprobs[1:] if ranked] \
        == list(ids[-3:])


def test_a_prompt_no_longer_than_n_is_unchanged(engine: Engine) -> None:
    length = len(engine.tokenizer.encode(STORY))
    plain = engine.complete(request(echo=True))
    for keep in (length, length + 50, -1):
        assert engine.complete(request(echo=True, truncate_prompt_tokens=keep)) == plain


def test_minus_one_keeps_what_fits_beside_max_tokens(engine: Engine) -> None:
    long_prompt = tuple(range(100, 100 + engine.context_length))  # a full context of ids
    completion = engine.complete(request(long_prompt, truncate_prompt_tokens=-1,
                                         max_tokens=10, temperature=0))
    assert completion.usage.prompt_tokens == engine.context_length - 10
    with pytest.raises(InvalidRequestError, match="maximum context length"):
        engine.complete(request(long_prompt, max_tokens=10))


def test_more_than_fits_beside_max_tokens_is_refused_with_vllms_words(engine: Engine) -> None:
    limit = engine.context_length - 16
    message = (f"truncate_prompt_tokens={limit + 1} cannot be greater than max_model_len - "
               f"max_tokens = {limit}. Please request a smaller truncation size.")
    with pytest.raises(InvalidRequestError, match=message) as refused:
        engine.complete(request(truncate_prompt_tokens=limit + 1, max_tokens=16))
    assert refused.value.param == "truncate_prompt_tokens"
    assert engine.complete(request(truncate_prompt_tokens=limit, max_tokens=16)).choices


@pytest.mark.parametrize("keep", [0, -2])
def test_zero_and_below_minus_one_are_refused(keep: int) -> None:
    with pytest.raises(InvalidRequestError, match="-1 or at least 1") as refused:
        request(truncate_prompt_tokens=keep)
    assert refused.value.param == "truncate_prompt_tokens"
