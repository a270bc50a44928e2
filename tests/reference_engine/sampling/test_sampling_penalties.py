"""repetition_penalty (HF/CTRL, prompt + generated) and presence/frequency (OpenAI, generated)."""

from __future__ import annotations

import numpy as np
import pytest
from sampling_oracles import apply_presence_frequency_penalty, apply_repetition_penalty

NEG_INF = -np.inf


def test_repetition_penalty_multiplies_negative_divides_positive_once_per_token() -> None:
    logits = np.array([-1.0, -2.0, 0.5, -3.0, NEG_INF])
    out = apply_repetition_penalty(logits, penalty=2.0, prompt_ids=[0, 4], generated_ids=[2, 2, 2])
    np.testing.assert_array_equal(out, [-2.0, -2.0, 0.25, -3.0, NEG_INF])
    np.testing.assert_array_equal(logits, [-1.0, -2.0, 0.5, -3.0, NEG_INF])  # pure


def test_repetition_penalty_below_one_favours_seen_tokens() -> None:
    out = apply_repetition_penalty(
        np.array([-2.0, -2.0]), penalty=0.5, prompt_ids=[], generated_ids=[1]
    )
    np.testing.assert_array_equal(out, [-2.0, -1.0])


def test_repetition_penalty_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="repetition_penalty"):
        apply_repetition_penalty(np.zeros(2), penalty=0.0, prompt_ids=[], generated_ids=[])
    with pytest.raises(ValueError, match="prompt_ids holds token id 7"):
        apply_repetition_penalty(np.zeros(2), penalty=1.5, prompt_ids=[7], generated_ids=[])


def test_presence_and_frequency_follow_the_openai_formula_over_generated_only() -> None:
    logits = np.array([-1.0, -1.0, -1.0, -1.0, NEG_INF])
    out = apply_presence_frequency_penalty(
        logits, presence_penalty=0.5, frequency_penalty=0.25, generated_ids=[1, 1, 3, 4]
    )
    # count 2 -> -1 - 2*0.25 - 0.5; count 1 -> -1 - 0.25 - 0.5; unseen unchanged; -inf stays
    np.testing.assert_array_equal(out, [-1.0, -2.0, -1.0, -1.75, NEG_INF])


def test_negative_presence_and_frequency_raise_seen_tokens() -> None:
    out = apply_presence_frequency_penalty(
        np.array([-3.0, -3.0]), presence_penalty=-1.0, frequency_penalty=-0.5, generated_ids=[0]
    )
    np.testing.assert_array_equal(out, [-1.5, -3.0])


def test_presence_frequency_without_generated_tokens_is_a_copy() -> None:
    logits = np.array([-1.0, -2.0])
    out = apply_presence_frequency_penalty(
        logits, presence_penalty=2.0, frequency_penalty=2.0, generated_ids=[]
    )
    assert out is not logits
    np.testing.assert_array_equal(out, logits)
