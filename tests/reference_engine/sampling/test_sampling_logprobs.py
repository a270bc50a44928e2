"""log_softmax, finite_logprob and top_logprobs: what the API reports."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_engine.sampling import (
    NoAllowedTokenError,
    finite_logprob,
    log_softmax,
    top_logprobs,
)

NEG_INF = -np.inf


def test_log_softmax_normalises_and_keeps_minus_infinity() -> None:
    out = log_softmax(np.array([1.0, NEG_INF, 3.0, 2.0]))
    assert out[1] == NEG_INF
    assert abs(np.exp(out).sum() - 1.0) < 1e-12
    np.testing.assert_allclose(out[[0, 2, 3]] - out[0], [0.0, 2.0, 1.0])
    with pytest.raises(NoAllowedTokenError):
        log_softmax(np.full(3, NEG_INF))


def test_finite_logprob_maps_minus_infinity_to_minus_9999() -> None:
    assert finite_logprob(NEG_INF) == -9999.0
    assert finite_logprob(-12345.0) == -9999.0
    assert finite_logprob(np.float64(-0.5)) == -0.5 and type(finite_logprob(-0.5)) is float


def test_top_logprobs_orders_by_probability_then_lowest_id() -> None:
    x = np.array([-2.0, -1.0, NEG_INF, -1.0, -3.0])
    assert top_logprobs(x, 3) == [(1, -1.0), (3, -1.0), (0, -2.0)]
    assert top_logprobs(x, 0) == []
    assert top_logprobs(x, 9) == [(1, -1.0), (3, -1.0), (0, -2.0), (4, -3.0), (2, NEG_INF)]
    with pytest.raises(ValueError, match="top_logprobs k"):
        top_logprobs(x, -1)


def reference(x: np.ndarray, k: int) -> list[tuple[int, float]]:
    order = sorted(range(len(x)), key=lambda i: (-x[i], i))
    return [(i, float(x[i])) for i in order[:k]]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, -1.0, -1.5, -2.0, -7.0, NEG_INF]), min_size=1, max_size=40),
    st.integers(0, 45),
)
def test_top_logprobs_matches_a_full_sort(values: list[float], k: int) -> None:
    x = np.asarray(values)
    assert top_logprobs(x, k) == reference(x, k)


def test_the_remembered_normaliser_is_the_computed_one() -> None:
    """``_scalar_normaliser`` is cached by value; equal keys (0.0 and -0.0 included) must
    give the bits a fresh computation gives."""
    from reference_engine.sampling.logprobs import _scalar_normaliser

    for values, base in [((-np.inf,), (-3.25,)), ((0.0, -1.5), (-0.0, -2.0)),
                         ((-0.0, -1.5), (0.0, -2.0)), ((2.5,), (-np.inf,))]:
        remembered = _scalar_normaliser(values, base)
        fresh = _scalar_normaliser.__wrapped__(values, base)
        assert np.float64(remembered).tobytes() == np.float64(fresh).tobytes()
