"""logit_bias: additive, pure, -inf stays -inf, ids checked against the vocabulary."""

from __future__ import annotations

import numpy as np
import pytest
from sampling_oracles import apply_logit_bias

NEG_INF = -np.inf


def test_adds_the_bias_to_listed_tokens_only() -> None:
    logits = np.array([-1.0, -2.0, -3.0, -4.0])
    out = apply_logit_bias(logits, {1: 5.0, 3: -100.0})
    np.testing.assert_array_equal(out, [-1.0, 3.0, -3.0, -104.0])


def test_is_pure_and_keeps_minus_infinity() -> None:
    logits = np.array([NEG_INF, -1.0, -2.0])
    logits.flags.writeable = False  # the model's array is read-only
    out = apply_logit_bias(logits, {0: 100.0})
    assert out[0] == NEG_INF and out is not logits
    np.testing.assert_array_equal(logits, [NEG_INF, -1.0, -2.0])
    assert apply_logit_bias(logits, {}) is not logits


@pytest.mark.parametrize("token", [3, 99, -1])
def test_rejects_ids_outside_the_vocabulary(token: int) -> None:
    with pytest.raises(ValueError, match=f"logit_bias token id {token}"):
        apply_logit_bias(np.zeros(3), {token: 1.0})
