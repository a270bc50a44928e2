"""allowed_token_ids (vLLM's whitelist): every token not listed is -inf before anything else,
the listed keep their model scores, and the draw never leaves the list."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sampling_oracles import apply_allowed_token_ids, apply_bad_words, apply_logit_bias

from reference_engine.sampling import (
    InvalidParameter,
    NoAllowedTokenError,
    SamplingContext,
    SamplingParams,
    SeededRng,
    log_softmax,
    process_logits,
    sample,
)

VOCAB = [bytes([ord("a") + i]) for i in range(12)]
EOS = frozenset({11})
NEG_INF = -np.inf


def model_logprobs(seed: int = 0) -> np.ndarray:
    out = log_softmax(np.random.default_rng(seed).normal(0.0, 2.0, len(VOCAB)))
    out.flags.writeable = False
    return out


def context(params: SamplingParams, generated: Sequence[int] = ()) -> SamplingContext:
    return SamplingContext(params, prompt_ids=(1, 2), token_bytes=VOCAB, eos_ids=EOS,
                           generated_ids=generated)


def test_the_list_is_kept_as_a_set_and_turns_the_processors_on() -> None:
    params = SamplingParams(allowed_token_ids=[7, 3, 7, 0])
    assert params.allowed_token_ids == (0, 3, 7)
    assert params == SamplingParams(allowed_token_ids=(0, 3, 7))
    assert params.has_logit_processors and not params.truncates
    assert not SamplingParams(allowed_token_ids=[1], response_format="json_object").grammar_only
    assert SamplingParams().allowed_token_ids is None


@pytest.mark.parametrize(("value", "message"), [
    ([], "allowed_token_ids is not None and empty!"),
    ([1, -2], "allowed_token_ids must hold non-negative integer token ids"),
    ([1, True], "allowed_token_ids must hold non-negative integer token ids"),
    ("12", "allowed_token_ids must be a list of token ids"),
])
def test_an_empty_or_malformed_list_is_refused_naming_the_field(value: object,
                                                                message: str) -> None:
    with pytest.raises(InvalidParameter, match=message) as refused:
        SamplingParams(allowed_token_ids=value)  # type: ignore[arg-type]
    assert refused.value.param == "allowed_token_ids"


def test_ids_outside_the_vocabulary_are_refused_with_vllms_words() -> None:
    with pytest.raises(ValueError, match="allowed_token_ids contains out-of-vocab token id!"):
        context(SamplingParams(allowed_token_ids=[2, 12]))


def test_only_the_listed_tokens_keep_a_probability_renormalised_among_them() -> None:
    x = model_logprobs(1)
    allowed = [2, 5, 9]
    out = process_logits(x, context(SamplingParams(allowed_token_ids=allowed)))
    outside = [t for t in range(len(VOCAB)) if t not in allowed]
    assert (out[outside] == NEG_INF).all() and not out.flags.writeable
    assert abs(np.exp(out[allowed]).sum() - 1.0) < 1e-12
    # the listed tokens keep their relative scores: a renormalisation of the model's values
    np.testing.assert_allclose(out[allowed] - out[2], x[allowed] - x[2], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(out, log_softmax(apply_allowed_token_ids(x, allowed), base=x))


def test_the_whitelist_composes_with_the_other_processors_as_the_oracles_do() -> None:
    x = model_logprobs(2)
    params = SamplingParams(allowed_token_ids=[0, 3, 4, 6, 11], logit_bias={3: 2.0, 8: 50.0},
                            bad_word_tokens=((4,),), min_tokens=3)
    out = process_logits(x, context(params, [5]))
    y = apply_allowed_token_ids(x, params.allowed_token_ids or ())
    y = apply_logit_bias(y, params.logit_bias)  # +50 on 8 cannot lift a token not listed
    y = apply_bad_words(y, bad_word_tokens=params.bad_word_tokens, prompt_ids=(1, 2),
                        generated_ids=[5])
    y[11] = NEG_INF  # min_tokens: end-of-text is held off too
    np.testing.assert_array_equal(out, log_softmax(y, base=x))
    assert {int(t) for t in np.flatnonzero(out > NEG_INF)} == {0, 3, 6}


@settings(max_examples=60, deadline=None)
@given(allowed=st.sets(st.integers(0, len(VOCAB) - 1), min_size=1),
       seed=st.integers(0, 2**32), temperature=st.floats(0.0, 2.0),
       top_k=st.integers(0, 5), top_p=st.floats(0.05, 1.0))
def test_every_draw_is_a_listed_token_and_the_same_for_the_same_seed(
        allowed: set[int], seed: int, temperature: float, top_k: int, top_p: float) -> None:
    params = SamplingParams(allowed_token_ids=sorted(allowed), temperature=temperature,
                            top_k=top_k, top_p=top_p)
    processed = process_logits(model_logprobs(seed % 7), context(params))
    first = sample(processed, params, SeededRng(seed))
    assert first in allowed
    assert sample(processed, params, SeededRng(seed)) == first


def test_greedy_takes_the_best_listed_token() -> None:
    x = model_logprobs(3)
    allowed = [int(i) for i in np.argsort(x)[:4]]  # the four least likely tokens
    params = SamplingParams(allowed_token_ids=allowed, temperature=0)
    token = sample(process_logits(x, context(params)), params, SeededRng(0))
    assert token == max(allowed, key=lambda t: x[t])


def test_a_list_whose_every_token_is_banned_leaves_nothing_to_pick() -> None:
    params = SamplingParams(allowed_token_ids=[4], bad_word_tokens=((4,),))
    with pytest.raises(NoAllowedTokenError):
        process_logits(model_logprobs(), context(params))
