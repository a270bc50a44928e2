"""Language model: proper distributions, bit-exact determinism, thread-safe caching, sane text."""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from reference_engine.artifacts import load
from reference_engine.model import LanguageModel
from reference_engine.model.detlog import detlog

ARTIFACTS = load()
MODEL = ARTIFACTS.model
TOKENIZER = ARTIFACTS.tokenizer
EOT_ID = TOKENIZER.eot_id


def _contexts() -> list[list[int]]:
    rng = np.random.default_rng(1234)
    text_ids = TOKENIZER.encode("The Python language reference says that a class definition")
    contexts = [
        [],
        [EOT_ID],
        TOKENIZER.encode("The Python"),
        [EOT_ID, *TOKENIZER.encode("The")],
        text_ids,
        [4000, 4001, 4002],  # rarely or never seen merges
        [0, 0, 0],
    ]
    contexts += [text_ids[: i + 1] for i in range(len(text_ids))]
    contexts += [[int(t) for t in rng.integers(0, MODEL.vocab_size, 3)] for _ in range(20)]
    return contexts


CONTEXTS = _contexts()


def _logsumexp(values: np.ndarray) -> float:
    top = float(values.max())
    return top + math.log(math.fsum(np.exp(values - top).tolist()))


@pytest.mark.parametrize("context", CONTEXTS)
def test_distribution_is_normalised_and_positive(context: list[int]) -> None:
    logprobs = MODEL.logprobs(context)
    assert logprobs.dtype == np.float64 and logprobs.shape == (MODEL.vocab_size,)
    assert np.all(np.isfinite(logprobs)) and np.all(logprobs < 0.0)
    assert abs(_logsumexp(logprobs)) < 1e-9
    probs = MODEL.probs(context)
    assert np.all(probs > 0.0)
    assert abs(math.fsum(probs.tolist()) - 1.0) < 1e-9
    assert np.max(np.abs(np.exp(logprobs) - probs)) < 1e-12


def test_arrays_are_read_only() -> None:
    for array in (MODEL.logprobs(CONTEXTS[2]), MODEL.probs(CONTEXTS[2]), MODEL.logprobs([])):
        assert not array.flags.writeable
        with pytest.raises(ValueError):
            array[0] = 0.0


def test_bit_identical_across_calls_and_instances() -> None:
    fresh = LanguageModel(MODEL.tables, MODEL.version, cache_size=0)
    for context in CONTEXTS:
        first = MODEL.logprobs(context).tobytes()
        assert MODEL.logprobs(context).tobytes() == first
        assert fresh.logprobs(context).tobytes() == first
        assert fresh.probs(context).tobytes() == MODEL.probs(context).tobytes()


def test_only_the_last_order_minus_one_tokens_matter() -> None:
    context = TOKENIZER.encode("An object is said to be hashable if it has a hash value")
    tail = context[-(MODEL.order - 1) :]
    assert np.array_equal(MODEL.logprobs(context), MODEL.logprobs(tail))
    assert np.array_equal(MODEL.logprobs([5, 6, *context]), MODEL.logprobs(context))
    assert len(MODEL.history(context)) <= MODEL.order - 1


def test_longer_context_sharpens_prediction() -> None:
    context = TOKENIZER.encode("The Python")
    follower = int(np.argmax(MODEL.logprobs(context)))
    assert MODEL.logprobs(context)[follower] > MODEL.logprobs([])[follower]


@pytest.mark.parametrize("context", CONTEXTS)
def test_logprobs_follow_the_base_order_outside_the_followers(context: list[int]) -> None:
    order = MODEL.descending_base
    assert sorted(order.tolist()) == list(range(MODEL.vocab_size)) and not order.flags.writeable
    log_base = MODEL.tables.log_base[order]
    assert np.all(log_base[1:] <= log_base[:-1])
    ties = log_base[1:] == log_base[:-1]
    assert np.all(order[1:][ties] > order[:-1][ties])  # ties: lowest id first
    # The documented structure the sampler's order hint relies on.
    regular = np.ones(MODEL.vocab_size, dtype=bool)
    history = MODEL.history(context)
    if history:
        level = MODEL.tables.levels[0]
        row = int(np.searchsorted(level.keys, history[-1]))
        regular[level.followers[level.offsets[row] : level.offsets[row + 1]]] = False
    values = MODEL.logprobs(context)[order[regular[order]]]
    assert np.all(values[1:] <= values[:-1])


def test_invalid_context_ids_raise() -> None:
    for bad in ([MODEL.vocab_size], [-1], [1, 2, 99999]):
        with pytest.raises(ValueError):
            MODEL.logprobs(bad)


def test_cache_is_thread_safe() -> None:
    reference = LanguageModel(MODEL.tables, MODEL.version, cache_size=0)
    shared = LanguageModel(MODEL.tables, MODEL.version, cache_size=4)  # forces constant eviction
    expected = {tuple(c): reference.logprobs(c).tobytes() for c in CONTEXTS}
    work: list[Sequence[int]] = CONTEXTS * 20

    def check(context: Sequence[int]) -> bool:
        return (
            shared.logprobs(context).tobytes() == expected[tuple(context)]
            and shared.probs(context).tobytes() == reference.probs(context).tobytes()
        )

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert all(pool.map(check, work))


def _greedy(prompt: str, steps: int) -> str:
    ids = [EOT_ID, *TOKENIZER.encode(prompt)]
    out: list[int] = []
    for _ in range(steps):
        token = int(np.argmax(MODEL.logprobs(ids)))
        if token == EOT_ID:
            break
        ids.append(token)
        out.append(token)
    return TOKENIZER.decode(out)


def test_greedy_generation_is_printable_text() -> None:
    text = _greedy("The Python", 30)
    assert len(text.split()) >= 5
    assert "\ufffd" not in text
    assert all(ch.isprintable() or ch in "\n\t" for ch in text)
    assert text == _greedy("The Python", 30)


def test_endoftext_is_learned() -> None:
    # A document ends after its last line; EOT must be far likelier there than mid-sentence.
    end_of_doc = TOKENIZER.encode("is executed.\n")
    mid_sentence = TOKENIZER.encode("The value of the")
    assert MODEL.logprobs(end_of_doc)[EOT_ID] > MODEL.logprobs(mid_sentence)[EOT_ID] + 2.0


def test_detlog_matches_log_and_golden_bits() -> None:
    rng = np.random.default_rng(7)
    values = np.concatenate([np.exp(rng.uniform(-50.0, 0.0, 5000)), [1.0, 0.5, 5e-324]])
    result = detlog(values)
    exact = np.array([math.log(v) for v in values.tolist()])
    assert np.all(np.abs(result - exact) <= 4 * np.spacing(np.abs(exact)) + 1e-300)
    # Bits that must be the same on every machine (no SIMD/libm dependence).
    golden = {
        0.1: "-0x1.26bb1bbb55515p+1",
        1e-7: "-0x1.01e3b843eaa73p+4",
        0.75: "-0x1.269621134db92p-2",
    }
    for value, bits in golden.items():
        assert float(detlog(np.array([value]))[0]).hex() == bits
    with pytest.raises(ValueError):
        detlog(np.array([0.0]))
