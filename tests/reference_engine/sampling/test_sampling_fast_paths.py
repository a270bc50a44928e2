"""The speed shortcuts give exactly (bit for bit) what the plain definitions give.

Each shortcut is compared with a from-scratch reference: the incremental SamplingContext with
a freshly built one, the batched detexp/detsum with the scalar ones, the top-k candidate head
and the top-p order hint with the sampler's documented algorithm over the whole vocabulary.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sampling_oracles import apply_no_repeat_ngram

from reference_engine.model.detexp import detexp, detexp1, detsum, detsum_rows, detsum_small
from reference_engine.sampling import (
    SamplingContext,
    SamplingParams,
    log_softmax,
    min_p_filter,
    process_logits,
    sample,
    top_k_filter,
    top_p_filter,
    xtc_filter,
)
from reference_engine.sampling.sampler import _draw
from reference_engine.sampling.truncation import top_k_top_p_filter

V = 64
VOCAB = [bytes([65 + i % 26]) * (1 + i // 26) for i in range(V - 1)] + [b"<eos>"]
EOS = frozenset({V - 1})


class Replay:
    """Replays the uniforms of a seeded stdlib generator (what SeededRng wraps)."""

    def __init__(self, seed: int) -> None:
        import random

        self._random = random.Random(seed)

    def random(self) -> float:
        return self._random.random()


def reference_sample(x: np.ndarray, params: SamplingParams, rng: Replay) -> int:
    """The sampler's documented algorithm, without any shortcut (truncation included)."""
    scaled = x if params.temperature == 1.0 else x / params.temperature
    probs = np.exp(scaled - scaled.max())
    ids = np.flatnonzero(probs > 0.0)
    probs = probs[ids]
    if 0 < params.top_k < probs.shape[0]:
        order = np.lexsort((ids, -probs))[: params.top_k]
        keep = np.sort(order)
        ids, probs = ids[keep], probs[keep]
    if params.top_p < 1.0 and probs.shape[0] > 1:
        order = np.lexsort((ids, -probs))
        cumulative = np.cumsum(probs[order])
        count = int(np.searchsorted(cumulative, params.top_p * probs.sum(), side="left")) + 1
        keep = np.sort(order[: min(count, probs.shape[0])])
        ids, probs = ids[keep], probs[keep]
    ids, probs = min_p_filter(ids, probs, params.min_p)
    if params.xtc_active and rng.random() < params.xtc_probability:
        ids, probs = xtc_filter(ids, probs, params.xtc_threshold)
    position, _ = _draw(probs, rng.random())
    return int(ids[position])


# Logprobs with many exact ties and a long flat tail, like the n-gram model's.
tied_logprobs = st.lists(
    st.sampled_from([0.0, -0.5, -1.0, -2.0, -2.0, -3.0, -5.0, -7.5, -9.0, -30.0, -np.inf]),
    min_size=V,
    max_size=V,
).map(lambda values: np.asarray(values) if max(values) > -np.inf else np.zeros(V))
sampling_params = st.builds(
    SamplingParams,
    temperature=st.sampled_from([0.05, 0.3, 0.8, 1.0, 2.0]),
    top_k=st.sampled_from([0, 1, 2, 5, 17, 63, 64, 100]),
    top_p=st.sampled_from([1.0, 0.95, 0.5, 0.05]),
    min_p=st.sampled_from([0.0, 0.05]),
    xtc_threshold=st.sampled_from([0.0, 0.1]),
    xtc_probability=st.sampled_from([0.0, 1.0]),
)


@settings(max_examples=200, deadline=None)
@given(tied_logprobs, sampling_params, st.integers(0, 2**32))
def test_sample_shortcuts_match_the_plain_algorithm(
    x: np.ndarray, params: SamplingParams, seed: int
) -> None:
    expected = [reference_sample(x, params, rng) for rng in [Replay(seed)] for _ in range(3)]
    rng = Replay(seed)
    assert [sample(x, params, rng) for _ in range(3)] == expected


def test_top_k_head_is_exact_on_a_large_flat_vocabulary() -> None:
    rng = np.random.default_rng(7)
    levels = np.log(rng.dirichlet(np.ones(120)))  # 120 distinct values, each on many tokens
    for trial in range(40):
        x = levels[rng.integers(0, 120, 4096)]
        x[rng.integers(0, 4096, 300)] -= rng.random(300) * 3  # penalised tokens
        x[rng.integers(0, 4096, 5)] = -np.inf
        x = log_softmax(x)
        for params in (
            SamplingParams(temperature=0.8, top_k=50, top_p=0.9, min_p=0.01),
            SamplingParams(temperature=1.0, top_k=3),
            SamplingParams(temperature=0.1, top_k=400, top_p=0.5),
            SamplingParams(top_p=0.9),
        ):
            a = Replay(trial)
            expected = [reference_sample(x, params, a) for _ in range(4)]
            b = Replay(trial)
            assert [sample(x, params, b) for _ in range(4)] == expected


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from([1e-3, 0.01, 0.01, 0.02, 0.05, 0.3, 1.0]), min_size=2, max_size=120),
    st.integers(1, 130),
    st.sampled_from([0.05, 0.5, 0.9, 0.99]),
)
def test_top_k_top_p_in_one_sort_is_the_composition(
    probs: list[float], k: int, top_p: float
) -> None:
    ids, values = np.arange(len(probs)) * 3, np.asarray(probs)
    fused = top_k_top_p_filter(ids, values, k, top_p)
    composed = top_p_filter(*top_k_filter(ids, values, k), top_p)
    assert fused[0].tolist() == composed[0].tolist()
    assert fused[1].tolist() == composed[1].tolist()


def test_top_p_running_sum_in_chunks_is_the_plain_cumsum() -> None:
    rng = np.random.default_rng(3)
    for size in (600, 3000, 4096):
        probs = rng.choice(np.exp(-rng.random(40) * 12), size)
        ids = np.arange(size)
        for top_p in (0.1, 0.6, 0.95, 0.9999):
            order = np.lexsort((ids, -probs))
            cumulative = np.cumsum(probs[order])
            count = int(np.searchsorted(cumulative, top_p * probs.sum(), side="left")) + 1
            expected = np.sort(order[: min(count, size)]).tolist()
            descending = np.sort(probs)[::-1]
            assert top_p_filter(ids, probs, top_p)[0].tolist() == expected
            assert top_p_filter(ids, probs, top_p, descending=descending)[0].tolist() == expected


def test_batched_detexp_and_detsum_give_the_scalar_bits() -> None:
    rng = np.random.default_rng(11)
    for size in (1, 2, 7, 8, 9, 100, 1000):
        values = -np.abs(rng.normal(size=size)) * rng.choice([0.1, 1.0, 30.0, 800.0], size)
        values[0] = -np.inf if size > 1 else values[0]
        batched = detexp(values)
        assert [float(v).hex() for v in batched] == [detexp1(float(v)).hex() for v in values]
        pairs = np.stack((batched, batched[::-1] * 0.5), axis=1)
        sums = detsum_rows(pairs.T)
        assert float(sums[0]) == detsum(batched) == detsum_small(batched.tolist())
        assert float(sums[1]) == detsum(batched[::-1] * 0.5)
    with pytest.raises(ValueError):
        detexp(np.array([0.5]))
    with pytest.raises(ValueError):
        detexp(np.array([math.nan]))


# -- SamplingContext: incremental state == state built from scratch ------------------------

ALL_ON = SamplingParams(
    logit_bias={3: 2.0, 9: -1.5, 40: 100.0},
    bad_word_tokens=((5,), (7, 8), (1, 2, 3)),
    no_repeat_ngram=3,
    repetition_penalty=1.3,
    presence_penalty=0.4,
    frequency_penalty=0.7,
    min_tokens=4,
)


def fresh(params: SamplingParams, prompt: list[int], generated: list[int]) -> SamplingContext:
    return SamplingContext(
        params, prompt_ids=prompt, token_bytes=VOCAB, eos_ids=EOS, generated_ids=generated
    )


def model_logprobs(seed: int) -> np.ndarray:
    out = log_softmax(np.random.default_rng(seed).normal(0.0, 2.0, V))
    out.flags.writeable = False
    return out


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, V - 2), max_size=6),
    st.lists(st.integers(0, 12), min_size=1, max_size=40),
    st.sampled_from([ALL_ON, SamplingParams(no_repeat_ngram=2, presence_penalty=1.0)]),
)
def test_advanced_context_processes_like_a_fresh_one(
    prompt: list[int], tokens: list[int], params: SamplingParams
) -> None:
    ctx = fresh(params, prompt, [])
    contexts = [ctx]
    for step, token in enumerate(tokens):
        x = model_logprobs(step)
        expected = process_logits(x, fresh(params, prompt, tokens[:step]))
        assert process_logits(x, ctx).tobytes() == expected.tobytes()
        ctx = ctx.advance(token)
        contexts.append(ctx)
    assert ctx.generated_ids.tolist() == tokens and ctx.num_generated == len(tokens)
    # Older contexts still see their own history (the shared buffers only grew), and an older
    # context advanced with another token is a branch that sees its own history too.
    for length in (0, len(tokens) // 2, len(tokens)):
        old = contexts[length]
        assert old.generated_ids.tolist() == tokens[:length]
        x = model_logprobs(100 + length)
        expected = process_logits(x, fresh(params, prompt, tokens[:length]))
        assert process_logits(x, old).tobytes() == expected.tobytes()
        branch = old.advance(V - 2)
        expected = process_logits(x, fresh(params, prompt, [*tokens[:length], V - 2]))
        assert process_logits(x, branch).tobytes() == expected.tobytes()
        assert contexts[-1].generated_ids.tolist() == tokens


def test_context_inputs_match_the_from_scratch_functions() -> None:
    rng = np.random.default_rng(5)
    prompt = rng.integers(0, 10, 30).tolist()
    ctx = fresh(ALL_ON, prompt, [])
    ctx.seen_ids(), ctx.presence_frequency_penalties()  # computed now, then carried forward
    generated: list[int] = []
    for _ in range(200):
        token = int(rng.integers(0, 12))
        ctx, generated = ctx.advance(token), [*generated, token]
        history = np.asarray(prompt + generated)
        assert sorted(ctx.seen_ids().tolist()) == np.unique(history).tolist()
        ids, amounts = ctx.presence_frequency_penalties()
        counts = np.bincount(np.asarray(generated), minlength=V)
        assert sorted(ids.tolist()) == np.flatnonzero(counts).tolist()
        assert amounts.tolist() == (counts[ids] * 0.7 + 0.4).tolist()
        for n in (2, 3, 5):
            banned = np.isneginf(
                apply_no_repeat_ngram(np.zeros(V), n=n, prompt_ids=prompt, generated_ids=generated)
            )
            assert list(ctx.no_repeat_ngram_bans(n)) == np.flatnonzero(banned).tolist()
