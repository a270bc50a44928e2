"""repetition_penalty (HF/CTRL, prompt + generated) and presence/frequency (OpenAI, generated)."""

from __future__ import annotations

import numpy as np
import pytest
from sampling_oracles import apply_presence_frequency_penalty, apply_repetition_penalty

from reference_engine.sampling.penalties import penalise_repeated

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


@pytest.mark.parametrize(
    ("values", "penalty"),
    [
        ([-1.0, -2.5, -0.0, 0.0], 1.3),  # the fast path: finite, <= 0, far from the limit
        ([-1.0, -7.0], 0.4),  # a penalty below one
        ([-1e8, -3.0], 9.999999),  # just inside the limit: the fast path
        ([-1e8, -3.0], 10.000001),  # just past it: the general path, the same products
        ([-1.0, NEG_INF, -2.0], 1.5),  # a banned token: the general path keeps it banned
        ([-1.0, 2.0, -2.0], 2.0),  # a positive logit (logit_bias): divided, not multiplied
        ([-1e300, -1.0], 1e10),  # an overflow: saturated, and only the value that overflowed
        ([-200.0, NEG_INF], 1e8),  # past the limit beside a ban: kept (it did not overflow)
    ],
)
def test_penalise_repeated_matches_the_oracle_on_both_paths(
    values: list[float], penalty: float
) -> None:
    # penalise_repeated takes a fast path when every value is finite, <= 0 and cannot pass
    # the saturation limit; on either side of that test the result is the oracle's, bit for
    # bit, and nothing warns (the suite turns warnings into errors).
    logits = np.array([-5.0, *values, -6.0])
    ids = np.arange(1, len(values) + 1)
    expected = apply_repetition_penalty(logits, penalty=penalty, prompt_ids=ids.tolist(),
                                        generated_ids=[])
    penalise_repeated(logits, ids, penalty)
    assert logits.view(np.int64).tolist() == expected.view(np.int64).tolist()
