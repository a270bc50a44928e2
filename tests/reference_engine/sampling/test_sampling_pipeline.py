"""process_logits: the documented order, the no-copy fast path, and SamplingContext."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from sampling_oracles import (
    apply_bad_words,
    apply_logit_bias,
    apply_min_tokens,
    apply_no_repeat_ngram,
    apply_presence_frequency_penalty,
    apply_repetition_penalty,
)

from reference_engine.sampling import (
    SamplingContext,
    SamplingParams,
    apply_grammar,
    log_softmax,
    process_logits,
)

VOCAB = [b"{", b"}", b'"a"', b":", b"1", b",", b" ", b"x", b"<eos>"]
EOS = frozenset({8})
NEG_INF = -np.inf


def model_logprobs(seed: int = 0) -> np.ndarray:
    raw = np.random.default_rng(seed).normal(0.0, 2.0, len(VOCAB))
    out = log_softmax(raw)
    out.flags.writeable = False
    return out


def context(
    params: SamplingParams, generated: Sequence[int] = (), prompt: Sequence[int] = (4, 5)
) -> SamplingContext:
    return SamplingContext(
        params, prompt_ids=prompt, token_bytes=VOCAB, eos_ids=EOS, generated_ids=generated
    )


def test_defaults_return_the_model_array_itself() -> None:
    x = model_logprobs()
    assert process_logits(x, context(SamplingParams(temperature=0.3, top_k=2))) is x


def test_min_tokens_alone_only_costs_while_it_is_active() -> None:
    x = model_logprobs()
    params = SamplingParams(min_tokens=2)
    early = process_logits(x, context(params, [1]))
    assert early[8] == NEG_INF and abs(np.exp(early).sum() - 1) < 1e-12
    assert process_logits(x, context(params, [1, 2])) is x


def test_everything_on_equals_the_documented_composition() -> None:
    x = model_logprobs(3)
    params = SamplingParams(
        logit_bias={0: 3.0, 8: 100.0, 2: -1.5},
        bad_word_tokens=((7,), (5, 3)),
        no_repeat_ngram=2,
        repetition_penalty=1.7,
        presence_penalty=0.4,
        frequency_penalty=0.3,
        min_tokens=5,
        response_format="json_object",
    )
    prompt, generated = [4, 5, 4, 1], [0, 2, 3, 4, 5]  # json state: {"a":1,
    ctx = context(params, generated, prompt)
    y = apply_logit_bias(x, params.logit_bias)
    y = apply_bad_words(
        y, bad_word_tokens=params.bad_word_tokens, prompt_ids=prompt, generated_ids=generated
    )
    y = apply_no_repeat_ngram(y, n=2, prompt_ids=prompt, generated_ids=generated)
    y = apply_repetition_penalty(y, penalty=1.7, prompt_ids=prompt, generated_ids=generated)
    y = apply_presence_frequency_penalty(
        y, presence_penalty=0.4, frequency_penalty=0.3, generated_ids=generated
    )
    y = apply_min_tokens(y, min_tokens=5, num_generated=5, eos_ids=EOS)
    assert ctx.grammar_state is not None
    y = y.copy()
    apply_grammar(y, ctx.grammar_state, np.array(sorted(EOS)))
    out = process_logits(x, ctx)
    np.testing.assert_array_equal(out, log_softmax(y, base=x))
    np.testing.assert_allclose(out, log_softmax(y), rtol=1e-12)  # the dense normaliser
    assert not out.flags.writeable
    assert out[7] == NEG_INF and out[3] == NEG_INF  # bad words; "5 3" after "... 5"
    assert out[4] == NEG_INF  # no_repeat_ngram: "5 4" already occurred
    assert out[8] == NEG_INF  # EOS: +100 bias cannot end an incomplete object


def test_order_bias_before_repetition_before_presence() -> None:
    x = np.array([-2.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0])
    x.flags.writeable = False
    params = SamplingParams(logit_bias={0: 3.0}, repetition_penalty=2.0, presence_penalty=1.5)
    out = process_logits(x, context(params, [0], prompt=[]))
    # bias first: -2 + 3 = 1 > 0 is divided: 0.5; then presence: 0.5 - 1.5 = -1.0
    # (repetition first would give -2*2 + 3 - 1.5 = -2.5)
    np.testing.assert_allclose(out - out[1], np.zeros(9), atol=1e-12)


def test_min_tokens_beats_a_positive_bias_on_eos() -> None:
    x = model_logprobs()
    out = process_logits(x, context(SamplingParams(min_tokens=3, logit_bias={8: 100.0})))
    assert out[8] == NEG_INF


def test_shape_mismatch_is_an_error() -> None:
    with pytest.raises(ValueError, match="logprobs must have shape"):
        process_logits(np.zeros(3), context(SamplingParams()))


def test_context_advance_is_immutable_and_tracks_the_grammar_state() -> None:
    ctx = context(SamplingParams(response_format="json_object"))
    nxt = ctx.advance(0).advance(2)
    assert ctx.num_generated == 0 and nxt.generated_ids.tolist() == [0, 2]
    assert ctx.grammar_state is not nxt.grammar_state
    replayed = context(ctx.params, [0, 2])  # replayed on construction
    assert ctx.grammar_state is not None and nxt.grammar_state is not None
    assert replayed.grammar_state is not None
    assert (nxt.grammar_state.allowed_mask() == replayed.grammar_state.allowed_mask()).all()
    assert not (ctx.grammar_state.allowed_mask() == nxt.grammar_state.allowed_mask()).all()
    assert not nxt.output_complete and nxt.advance(3).advance(4).advance(1).output_complete
    assert nxt.token_filter() is not None
    assert context(SamplingParams()).token_filter() is None
    with pytest.raises(ValueError, match="not allowed by the response_format grammar"):
        ctx.advance(7)
    with pytest.raises(ValueError, match="token_id"):
        ctx.advance(99)


def test_context_validates_ids_once() -> None:
    with pytest.raises(ValueError, match="prompt_ids holds token id 9"):
        context(SamplingParams(), prompt=[9])
    with pytest.raises(ValueError, match="eos_ids"):
        SamplingContext(SamplingParams(), prompt_ids=[], token_bytes=VOCAB, eos_ids={20})
    with pytest.raises(ValueError, match="logit_bias token id 50"):
        context(SamplingParams(logit_bias={50: 1.0}))
