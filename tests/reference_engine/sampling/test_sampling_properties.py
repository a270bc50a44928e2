"""Hypothesis properties of the whole step (process_logits + sample) over random inputs."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_engine.sampling import (
    NoAllowedTokenError,
    SamplingContext,
    SamplingParams,
    SeededRng,
    log_softmax,
    process_logits,
    sample,
)

V = 10
VOCAB = [bytes([65 + i]) for i in range(V - 1)] + [b"<eos>"]
EOS = frozenset({V - 1})

# Realistic spread: model logprobs between -30 and 0 (before normalisation).
model_logprobs = st.lists(st.floats(-30.0, 0.0), min_size=V, max_size=V).map(
    lambda values: log_softmax(np.asarray(values))
)
token_lists = st.lists(st.integers(0, V - 1), max_size=12)

params_strategy = st.builds(
    SamplingParams,
    temperature=st.sampled_from([0.0, 0.3, 1.0, 2.0]),
    top_p=st.sampled_from([1.0, 0.9, 0.3]),
    top_k=st.sampled_from([0, 1, 3]),
    min_p=st.sampled_from([0.0, 0.05, 0.5]),
    presence_penalty=st.floats(-2.0, 2.0),
    frequency_penalty=st.floats(-2.0, 2.0),
    repetition_penalty=st.sampled_from([1.0, 0.8, 1.3]),
    no_repeat_ngram=st.sampled_from([1, 2, 3]),
    logit_bias=st.dictionaries(st.integers(0, V - 1), st.floats(-100.0, 100.0), max_size=3),
    bad_word_tokens=st.lists(st.lists(st.integers(0, V - 1), min_size=1, max_size=2), max_size=2),
    min_tokens=st.sampled_from([0, 3]),
    xtc_threshold=st.sampled_from([0.0, 0.1]),
    xtc_probability=st.sampled_from([0.0, 0.5]),
)


def ctx_for(params: SamplingParams, prompt: list[int], generated: list[int]) -> SamplingContext:
    return SamplingContext(
        params, prompt_ids=prompt, token_bytes=VOCAB, eos_ids=EOS, generated_ids=generated
    )


@settings(max_examples=150, deadline=None)
@given(model_logprobs, params_strategy, token_lists, token_lists, st.integers(0, 2**63))
def test_step_is_normalised_respects_bans_and_is_reproducible(
    x: np.ndarray, params: SamplingParams, prompt: list[int], generated: list[int], seed: int
) -> None:
    ctx = ctx_for(params, prompt, generated)
    try:
        processed = process_logits(x, ctx)
    except NoAllowedTokenError:  # e.g. bad words banned all ten tokens
        return
    finite = processed[processed > -np.inf]
    assert abs(np.exp(finite).sum() - 1.0) < 1e-9
    draws = [sample(processed, params, SeededRng(seed)) for _ in range(2)]
    assert draws[0] == draws[1]
    assert processed[draws[0]] > -np.inf  # a banned token is never sampled
    rng = SeededRng(seed)
    sequence = [sample(processed, params, rng) for _ in range(5)]
    rng = SeededRng(seed)
    assert [sample(processed, params, rng) for _ in range(5)] == sequence


@settings(max_examples=150, deadline=None)
@given(model_logprobs, st.integers(0, 2**32))
def test_temperature_zero_and_top_k_one_are_the_argmax(x: np.ndarray, seed: int) -> None:
    argmax = int(np.argmax(x))
    assert sample(x, SamplingParams(temperature=0.0), SeededRng(seed)) == argmax
    for temperature in (0.5, 1.0, 2.0):
        params = SamplingParams(top_k=1, temperature=temperature)
        assert sample(x, params, SeededRng(seed)) == argmax


@settings(max_examples=150, deadline=None)
@given(model_logprobs, st.integers(0, V - 1), st.integers(0, 2**32), token_lists)
def test_logit_bias_plus_100_wins_and_minus_100_never_wins(
    x: np.ndarray, token: int, seed: int, generated: list[int]
) -> None:
    for temperature in (0.0, 1.0, 2.0):
        plus = SamplingParams(temperature=temperature, logit_bias={token: 100.0})
        processed = process_logits(x, ctx_for(plus, [], generated))
        assert sample(processed, plus, SeededRng(seed)) == token
        minus = SamplingParams(temperature=temperature, logit_bias={token: -100.0})
        processed = process_logits(x, ctx_for(minus, [], generated))
        rng = SeededRng(seed)
        assert all(sample(processed, minus, rng) != token for _ in range(20))


@settings(max_examples=100, deadline=None)
@given(model_logprobs, st.lists(st.integers(0, V - 1), min_size=1, max_size=4), token_lists)
def test_single_token_bad_words_are_never_sampled(
    x: np.ndarray, banned: list[int], generated: list[int]
) -> None:
    params = SamplingParams(bad_word_tokens=tuple((t,) for t in banned), temperature=2.0)
    processed = process_logits(x, ctx_for(params, [], generated))
    rng = SeededRng(0)
    assert not {sample(processed, params, rng) for _ in range(50)} & set(banned)


def test_banning_the_likely_tokens_still_normalises_to_one() -> None:
    """Five tokens held ~0.999999 of the mass; two biased far down and three banned left the
    rest as ``1 - 0.999999...``, and the sparse re-normalisation summed to 1 + 1.04e-9."""
    x = log_softmax(np.array([-1.60943881, -1.60943881, -1.60943881, -1.60943881, -14.60943881,
                              -15.60943881, -15.10943881, -22.10943881, -29.78912631,
                              -1.60943881]))
    params = SamplingParams(temperature=0.0, no_repeat_ngram=2, logit_bias={1: -13.0, 9: -15.0})
    processed = process_logits(x, ctx_for(params, [], [3, 3, 0, 3, 2, 3]))
    finite = processed[processed > -np.inf]
    assert abs(np.exp(finite).sum() - 1.0) < 1e-12
