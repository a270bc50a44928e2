"""bad_word_tokens, no_repeat_ngram and min_tokens: -inf bans from the token history."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sampling_oracles import apply_bad_words, apply_min_tokens, apply_no_repeat_ngram

from reference_engine.sampling import SamplingContext, SamplingParams
from reference_engine.sampling.bans import no_repeat_ngram_bans

NEG_INF = -np.inf


def banned(out: np.ndarray) -> list[int]:
    return np.flatnonzero(out == NEG_INF).tolist()


def test_single_token_bad_words_are_always_banned() -> None:
    out = apply_bad_words(np.zeros(6), bad_word_tokens=[[2], [5]], prompt_ids=[], generated_ids=[])
    assert banned(out) == [2, 5]


def test_multi_token_bad_word_bans_its_last_token_only_after_its_prefix() -> None:
    words = [[1, 2, 3]]
    free = apply_bad_words(np.zeros(6), bad_word_tokens=words, prompt_ids=[0], generated_ids=[2])
    assert banned(free) == []
    hit = apply_bad_words(np.zeros(6), bad_word_tokens=words, prompt_ids=[0], generated_ids=[1, 2])
    assert banned(hit) == [3]


def test_bad_word_prefix_may_start_in_the_prompt() -> None:
    out = apply_bad_words(
        np.zeros(6), bad_word_tokens=[[4, 1, 5]], prompt_ids=[4], generated_ids=[1]
    )
    assert banned(out) == [5]


def test_the_engine_bans_bad_words_as_the_oracle_does_sorted_and_unique() -> None:
    words = [[3], [8, 3], [7, 8, 1], [9, 2], [3]]
    params = SamplingParams(bad_word_tokens=words)  # type: ignore[arg-type]
    ctx = SamplingContext(params, prompt_ids=[7], token_bytes=[b"x"] * 10, eos_ids=frozenset(),
                          generated_ids=[8])
    assert ctx.bad_word_bans() == [1, 3]
    oracle = apply_bad_words(np.zeros(10), bad_word_tokens=words, prompt_ids=[7],
                             generated_ids=[8])
    assert banned(oracle) == [1, 3]


def test_bad_words_outside_the_vocabulary_are_rejected() -> None:
    with pytest.raises(ValueError, match="bad_word_tokens holds token id 9"):
        apply_bad_words(np.zeros(3), bad_word_tokens=[[9]], prompt_ids=[], generated_ids=[])


def test_no_repeat_bigram_bans_every_token_that_followed_the_last_token() -> None:
    # history 1 2 1 3 1: "1" was followed by 2 and 3, so both are banned now
    out = apply_no_repeat_ngram(np.zeros(5), n=2, prompt_ids=[1, 2, 1], generated_ids=[3, 1])
    assert banned(out) == [2, 3]


def test_no_repeat_trigram_needs_the_last_two_tokens() -> None:
    out = apply_no_repeat_ngram(np.zeros(6), n=3, prompt_ids=[1, 2, 3, 1], generated_ids=[2])
    assert banned(out) == [3]
    out = apply_no_repeat_ngram(np.zeros(6), n=3, prompt_ids=[1, 2, 3, 4], generated_ids=[2])
    assert banned(out) == []


def test_no_repeat_ngram_one_and_short_histories_ban_nothing() -> None:
    assert (
        banned(apply_no_repeat_ngram(np.zeros(4), n=1, prompt_ids=[1, 1], generated_ids=[1])) == []
    )
    assert (
        banned(apply_no_repeat_ngram(np.zeros(4), n=4, prompt_ids=[1, 1], generated_ids=[1])) == []
    )
    with pytest.raises(ValueError, match="no_repeat_ngram"):
        apply_no_repeat_ngram(np.zeros(4), n=0, prompt_ids=[], generated_ids=[])


def naive_no_repeat(n: int, history: list[int]) -> list[int]:
    if n < 2 or len(history) < n:
        return []
    seen = {tuple(history[i : i + n]) for i in range(len(history) - n + 1)}
    prefix = tuple(history[len(history) - n + 1 :])
    return sorted({gram[-1] for gram in seen if gram[:-1] == prefix})


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 5), st.lists(st.integers(0, 3), max_size=30))
def test_no_repeat_ngram_matches_a_naive_implementation(n: int, history: list[int]) -> None:
    ids = np.asarray(history, dtype=np.int64)
    assert no_repeat_ngram_bans(n, ids).tolist() == naive_no_repeat(n, history)


def test_min_tokens_bans_eos_until_enough_tokens_were_generated() -> None:
    logits = np.array([-1.0, -2.0, -3.0])
    early = apply_min_tokens(logits, min_tokens=3, num_generated=2, eos_ids={0, 2})
    assert banned(early) == [0, 2]
    late = apply_min_tokens(logits, min_tokens=3, num_generated=3, eos_ids={0, 2})
    np.testing.assert_array_equal(late, logits)
    assert banned(apply_min_tokens(logits, min_tokens=3, num_generated=0, eos_ids=())) == []
