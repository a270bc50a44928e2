"""json_object constraint: token-level checks, the cached trie mask, the cheap processor and
generation that always ends in an object ``json.loads`` accepts."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_engine.sampling import (
    JsonObjectConstraint,
    SamplingContext,
    SamplingParams,
    SeededRng,
    apply_json_object,
    process_logits,
    sample,
)

EOS = b"<|endoftext|>"
MIXED_VOCAB = [
    b"{", b"}", b"[", b"]", b'"', b":", b",", b" ", b"  ", b"\n", b"\t", b"a", b"ab", b'"a"',
    b'"a":', b'":', b'",', b'"}', b"1", b"12", b"-", b".", b"e", b"true", b"tr", b"ue", b"null",
    b"\\", b"\\n", b"\\u", b"00e9", b"\xc3", b"\xa9", b"\xc3\xa9", b"\xe6\x97\xa5", b"x", b"",
    b'{"', b"}}", b" {", b'a"}', EOS,
]  # fmt: skip
MIXED_EOS = frozenset({len(MIXED_VOCAB) - 1})
SMALL_VOCAB = [b"{", b"}", b'"a"', b":", b"1", b",", b" ", b"x", EOS]
SMALL_EOS = frozenset({len(SMALL_VOCAB) - 1})


def reachable_states(constraint: JsonObjectConstraint, walks: int = 60) -> set:
    rnd = random.Random(0)
    states = {constraint.initial_state()}
    for _ in range(walks):
        state = constraint.initial_state()
        for _ in range(12):
            options = [t for t in constraint.token_bytes[:-1] if constraint.is_allowed(state, t)]
            if not options:
                break
            state = constraint.advance(state, rnd.choice(options))
            states.add(state)
    return states


def test_is_allowed_and_advance() -> None:
    constraint = JsonObjectConstraint(MIXED_VOCAB)
    state = constraint.initial_state()
    assert constraint.is_allowed(state, b" {") and not constraint.is_allowed(state, b"a")
    assert not constraint.is_allowed(state, b"")  # no progress, never allowed
    state = constraint.advance(state, b'{"')
    assert constraint.is_allowed(state, b"\xc3") and not constraint.is_allowed(state, b"\xa9")
    with pytest.raises(ValueError, match="not allowed by the json_object grammar"):
        constraint.advance(state, b"\n")
    state = constraint.advance(state, b'a":')
    state = constraint.advance(state, b"1}")
    assert constraint.is_complete(state)


def test_allowed_mask_equals_checking_every_token() -> None:
    constraint = JsonObjectConstraint(MIXED_VOCAB)
    states = reachable_states(constraint)
    assert len(states) > 20
    for state in states:
        mask = constraint.allowed_mask(state)
        expected = [constraint.is_allowed(state, t) for t in MIXED_VOCAB]
        assert mask.tolist() == expected, state
        assert constraint.allowed_mask(state) is mask  # cached
        assert not mask.flags.writeable


def test_cheap_processor_bans_eos_until_complete_then_all_but_whitespace() -> None:
    constraint = JsonObjectConstraint(MIXED_VOCAB)
    logits = np.zeros(len(MIXED_VOCAB))
    open_state = constraint.advance(constraint.initial_state(), b"{")
    out = apply_json_object(logits, constraint=constraint, state=open_state, eos_ids=MIXED_EOS)
    banned = {MIXED_VOCAB[i] for i in np.flatnonzero(out == -np.inf)}
    assert banned == {EOS, b""}  # the rest is left to the lazy filter
    done = constraint.advance(open_state, b"}")
    out = apply_json_object(logits, constraint=constraint, state=done, eos_ids=MIXED_EOS)
    allowed = {MIXED_VOCAB[i] for i in np.flatnonzero(out > -np.inf)}
    assert allowed == {b" ", b"  ", b"\n", b"\t", EOS}


def test_exact_processor_matches_the_mask_and_eos_rule() -> None:
    constraint = JsonObjectConstraint(MIXED_VOCAB)
    logits = np.zeros(len(MIXED_VOCAB))
    for state in reachable_states(constraint, walks=20):
        out = apply_json_object(
            logits, constraint=constraint, state=state, eos_ids=MIXED_EOS, exact=True
        )
        expected = constraint.allowed_mask(state).copy()
        expected[-1] = constraint.is_complete(state)
        assert (out > -np.inf).tolist() == expected.tolist()


def test_whitespace_after_the_object_is_bounded() -> None:
    constraint = JsonObjectConstraint(MIXED_VOCAB, max_whitespace=2)
    state = constraint.advance(constraint.initial_state(), b"{}")
    state = constraint.advance(state, b" ")
    assert constraint.whitespace_fits(state).tolist() == [
        t in (b" ", b"\n", b"\t") for t in MIXED_VOCAB
    ]
    state = constraint.advance(state, b" ")
    assert not constraint.whitespace_fits(state).any()  # only EOS is left


def test_token_filter_answers_eos_by_id_and_masks_in_bulk() -> None:
    constraint = JsonObjectConstraint(MIXED_VOCAB)
    eos = len(MIXED_VOCAB) - 1
    state = constraint.advance(constraint.initial_state(), b'{"')
    token_filter = constraint.token_filter(state, MIXED_EOS)
    assert not token_filter(eos)  # EOS's bytes are string-safe text, but EOS is not text
    assert token_filter(MIXED_VOCAB.index(b"ab"))
    ids = np.arange(len(MIXED_VOCAB))
    expected = [constraint.is_allowed(state, t) for t in MIXED_VOCAB[:-1]] + [False]
    assert token_filter.mask(ids).tolist() == expected
    done = constraint.token_filter(constraint.advance(state, b'a":1}'), MIXED_EOS)
    assert done(eos) and done.mask(np.array([eos]))[0]


def test_vocabulary_mismatch_is_an_error() -> None:
    constraint = JsonObjectConstraint(SMALL_VOCAB)
    with pytest.raises(ValueError, match="vocabulary"):
        apply_json_object(
            np.zeros(3), constraint=constraint, state=constraint.initial_state(), eos_ids=()
        )


def generate(
    vocab: list[bytes], eos_ids: frozenset[int], params: SamplingParams, seed: int
) -> tuple[bytes, bool]:
    """Run the real loop: process_logits -> sample(allowed=...) -> advance. Returns
    (bytes generated before EOS, whether EOS ended it)."""
    rnd = np.random.default_rng(seed)
    ctx = SamplingContext(params, prompt_ids=[0], token_bytes=vocab, eos_ids=eos_ids)
    rng = SeededRng(seed)
    out: list[bytes] = []
    for _ in range(200):
        raw = rnd.normal(0.0, 3.0, len(vocab))
        logprobs = raw - np.log(np.sum(np.exp(raw)))
        token = sample(process_logits(logprobs, ctx), params, rng, allowed=ctx.token_filter())
        if token in eos_ids:
            return b"".join(out), True
        out.append(vocab[token])
        ctx = ctx.advance(token)
    return b"".join(out), False


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([0.0, 0.7, 1.0, 1.5]))
def test_generation_ending_in_eos_is_always_one_json_object(seed: int, temperature: float) -> None:
    params = SamplingParams(temperature=temperature, response_format="json_object")
    text, ended = generate(SMALL_VOCAB, SMALL_EOS, params, seed)
    if ended:
        assert isinstance(json.loads(text), dict)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_generation_over_a_mixed_vocabulary_stays_valid(seed: int) -> None:
    params = SamplingParams(top_k=5, response_format="json_object")
    text, ended = generate(MIXED_VOCAB, MIXED_EOS, params, seed)
    if ended:
        assert isinstance(json.loads(text.decode("utf-8")), dict)


def test_generation_usually_finishes() -> None:
    params = SamplingParams(temperature=0.0, response_format="json_object")
    finished = sum(generate(SMALL_VOCAB, SMALL_EOS, params, seed)[1] for seed in range(40))
    assert finished >= 20  # the test above is not vacuous
