"""The sparse fast path (``model.sparse``, ``sampling.fast_draw``) against the exact path.

Speed never changes a byte: the sparse view must hold the dense array's bits, ``draw`` must
give ``sample``'s token for every ``u`` it answers (and say None otherwise), and whole
requests must give identical completions (tokens, text, logprobs, top logprobs) with the fast
path on and off, for random requests and seeds.
"""

from __future__ import annotations

import math
import random
from typing import Any
from unittest import mock

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reference_engine import Engine, GenerationRequest, SamplingParams
from reference_engine.generation import choice as choice_module
from reference_engine.sampling import log_softmax, sample, top_logprobs
from reference_engine.sampling.fast_draw import WEIGHTS, chain_cdf, draw
from reference_engine.sampling.logprobs import banned_normaliser

ENGINE = Engine()
MODEL = ENGINE.artifacts.model
EOT = ENGINE.tokenizer.eot_id
PROMPTS = ["The Python language", "Lists are", "A dictionary", "{", "def f(x):", "\n", ""]


class FixedU:
    """A random source returning one given number (``sample`` asks once without XTC)."""

    def __init__(self, u: float) -> None:
        self.u = u

    def random(self) -> float:
        return self.u


def _contexts(count: int, seed: int) -> list[list[int]]:
    """Contexts as generation meets them: the prompts' and a sampled continuation's."""
    request = GenerationRequest(prompts=tuple(PROMPTS[:4]), seed=seed, max_tokens=count)
    out: list[list[int]] = []
    for prompt, choice in zip(PROMPTS, ENGINE.complete(request).choices, strict=False):
        history = [EOT, *ENGINE.tokenizer.encode(prompt), *choice.token_ids]
        out.extend(history[max(0, end - 3) : end] for end in range(1, len(history) + 1))
    return out


contexts = st.lists(st.integers(0, EOT), max_size=4) | st.sampled_from(_contexts(40, 5))


@given(context=contexts, k=st.integers(1, 12))
@settings(max_examples=150, deadline=None)
def test_sparse_view_holds_the_dense_bits(context: list[int], k: int) -> None:
    view = MODEL.sparse_logprobs(context)
    dense = MODEL.logprobs(context)
    assert np.array_equal(dense[view.followers], view.values)
    assert [view.value(t) for t in range(0, EOT + 1, 37)] == dense[::37].tolist()
    assert view.top(k) == top_logprobs(dense, k)
    assert np.array_equal(view.dense(), dense)


@given(
    context=contexts,
    temperature=st.sampled_from([1.0, 0.8, 0.7, 1.3, 0.3, 2.0]) | st.floats(0.05, 2.0),
    u=st.floats(0.0, 1.0, exclude_max=True),
)
@settings(max_examples=300, deadline=None)
def test_draw_gives_samples_token_or_none(context: list[int], temperature: float,
                                          u: float) -> None:
    view = MODEL.sparse_logprobs(context)
    params = SamplingParams(temperature=temperature)
    WEIGHTS.build(view.tables, temperature)
    drawn = draw(view, temperature, u)
    assert drawn is not None or chain_cdf(view, temperature) is not None
    if drawn is not None:
        token = sample(view.dense(), params, FixedU(u))
        assert drawn[0] == token
        assert drawn[1] == view.dense()[token]


@given(
    context=contexts,
    temperature=st.sampled_from([1.0, 0.8, 0.7, 1.3]) | st.floats(0.05, 2.0),
    u=st.floats(0.0, 1.0, exclude_max=True),
    banned=st.sets(st.sampled_from([0, 11, 13, 198, 262, 464, 2000, EOT]), min_size=1,
                   max_size=3).map(sorted),
)
@settings(max_examples=300, deadline=None)
def test_draw_with_end_of_text_banned_gives_the_processed_arrays_token(
        context: list[int], temperature: float, u: float, banned: list[int]) -> None:
    """Before ``min_tokens`` the draw steps over the end-of-text ids' intervals (the model's,
    or a request's ``eos_token_ids``): the token and the re-normalised logprob of ``sample``
    over ``process_logits``' array, those ids at -inf."""
    view = MODEL.sparse_logprobs(context)
    WEIGHTS.build(view.tables, temperature)
    cdf = chain_cdf(view, temperature)
    assert cdf is not None
    base = view.dense()
    x = base.copy()
    x[banned] = -np.inf
    processed = log_softmax(x, base=base)
    values = [view.value(token) for token in banned]
    normaliser = banned_normaliser(values)
    if normaliser is None:  # most of the mass banned: log_softmax exponentiates everything
        return
    drawn = cdf.token(u, tuple((t, cdf.weight(v)) for t, v in zip(banned, values, strict=True)))
    if drawn is not None:
        token = sample(processed, SamplingParams(temperature=temperature), FixedU(u))
        assert drawn[0] == token and token not in banned
        assert drawn[1] - normaliser == processed[token]


def test_draw_with_end_of_text_banned_rarely_declines() -> None:
    """The exact path runs only near a boundary (``MARGIN``), not on every banned step."""
    rng = random.Random(11)
    declined = asked = 0
    for context in _contexts(30, 4)[::3]:
        view = MODEL.sparse_logprobs(context)
        WEIGHTS.build(view.tables, 1.0)
        cdf = chain_cdf(view, 1.0)
        assert cdf is not None
        weight = cdf.weight(view.value(EOT))
        for _ in range(20):
            asked += 1
            declined += cdf.token(rng.random(), ((EOT, weight),)) is None
    assert declined <= asked // 100


def test_draw_declines_at_the_boundaries() -> None:
    """At (and next to) each interval boundary ``draw`` must either agree or decline."""
    rng = random.Random(3)
    for context in rng.sample(_contexts(30, 9), 12):
        view = MODEL.sparse_logprobs(context)
        for temperature in (1.0, 0.8):
            WEIGHTS.build(view.tables, temperature)
            cdf = chain_cdf(view, temperature)
            assert cdf is not None
            params = SamplingParams(temperature=temperature)
            dense = view.dense()
            entries = range(cdf.first, cdf.stop)
            boundaries = [cdf.post(e) for e in rng.sample(entries, min(8, len(entries)))]
            boundaries += [cdf.g * b for b in rng.sample(cdf.weights.base_list, 8)]
            for boundary in boundaries:
                u0 = boundary / cdf.total
                for u in (u0, math.nextafter(u0, 0.0), math.nextafter(u0, 1.0)):
                    if 0.0 <= u < 1.0:
                        drawn = draw(view, temperature, u)
                        assert drawn is None or drawn[0] == sample(dense, params, FixedU(u))


def _request(fields: dict[str, Any]) -> GenerationRequest:
    return GenerationRequest(**fields)


requests = st.fixed_dictionaries(
    {
        "prompts": st.lists(st.sampled_from(PROMPTS), min_size=1, max_size=2).map(tuple),
        "seed": st.integers(-(2**63), 2**63 - 1),
        "max_tokens": st.integers(1, 40),
        "sampling": st.builds(
            SamplingParams,
            temperature=st.sampled_from([0.0, 1.0, 0.8, 0.7, 1.2]) | st.floats(0.05, 2.0),
            min_tokens=st.sampled_from([0, 0, 3, 40]),
        ),
    },
    optional={
        "logprobs": st.integers(0, 5),
        "n": st.integers(1, 3),
        "echo": st.booleans(),
        "stop": st.sampled_from([(".",), ("\n", " the")]),
        "eos_token_ids": st.sampled_from([(13,), (198, 262)]),
    },
)


@given(fields=requests)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_requests_give_the_exact_paths_bytes(fields: dict[str, Any]) -> None:
    request = _request(fields)
    fast = ENGINE.complete(request), list(ENGINE.stream(request))
    with mock.patch.object(choice_module, "sparse_path", lambda params: False):
        exact = ENGINE.complete(request), list(ENGINE.stream(request))
    assert fast == exact


def test_deeper_levels_override_entries_of_the_level_2_row() -> None:
    """``_deep_entries`` relies on followers nesting: every deeper row's followers are among
    those of its level-2 row. Checked over every row of the shipped model, against the
    overrides written level by level (the last level wins)."""
    from reference_engine.sampling.fast_draw import _deep_entries

    model = Engine().artifacts.model
    tables = model.sparse_tables
    checked = 0
    for level in range(1, len(tables.offsets)):
        rows_at_level = len(tables.offsets[level]) - 1
        for row in range(0, rows_at_level, max(1, rows_at_level // 400)):
            follower = tables.follower_lists[level][tables.offsets[level][row]]
            history = model.tables.levels[level].keys[row]
            context = []
            for _ in range(level + 1):
                context.insert(0, int(history % model.vocab_size))
                history //= model.vocab_size
            view = model.sparse_logprobs(context)
            assert len(view.rows) == level + 1 and view.rows[level] == row, (level, row, follower)
            expected: dict[int, float] = {}
            for deeper in range(1, len(view.rows)):
                offsets = tables.offsets[deeper]
                start, end = offsets[view.rows[deeper]], offsets[view.rows[deeper] + 1]
                for entry in range(start, end):
                    expected[tables.to_first[deeper][entry]] = view.entry_value(deeper, entry)
            deep, values = _deep_entries(tables, view.rows, view.scales)
            assert list(deep) == sorted(expected) and values == [expected[e] for e in deep]
            checked += 1
    assert checked > 400
