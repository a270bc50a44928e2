"""top_k, top_p, min_p and XTC filters: definitions, tie rules, and the head shortcut."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_engine.sampling import min_p_filter, top_k_filter, top_p_filter, xtc_filter


def kept(result: tuple[np.ndarray, np.ndarray]) -> list[int]:
    ids, probs = result
    assert ids.shape == probs.shape and (np.diff(ids) > 0).all()
    return ids.tolist()


def arrays(probs: list[float]) -> tuple[np.ndarray, np.ndarray]:
    return np.arange(len(probs), dtype=np.int64) * 10, np.asarray(probs, dtype=np.float64)


def test_top_k_keeps_the_k_most_likely_ties_by_lowest_id() -> None:
    ids, probs = arrays([0.1, 0.3, 0.2, 0.3, 0.1])
    assert kept(top_k_filter(ids, probs, 1)) == [10]
    assert kept(top_k_filter(ids, probs, 2)) == [10, 30]
    assert kept(top_k_filter(ids, probs, 4)) == [0, 10, 20, 30]
    assert kept(top_k_filter(ids, probs, 0)) == [0, 10, 20, 30, 40]
    assert kept(top_k_filter(ids, probs, 9)) == [0, 10, 20, 30, 40]
    with pytest.raises(ValueError, match="top_k"):
        top_k_filter(ids, probs, -1)


def test_top_p_keeps_the_smallest_set_reaching_top_p() -> None:
    ids, probs = arrays([0.125, 0.5, 0.25, 0.125])  # exact binary fractions
    assert kept(top_p_filter(ids, probs, 0.5)) == [10]
    assert kept(top_p_filter(ids, probs, 0.6)) == [10, 20]
    assert kept(top_p_filter(ids, probs, 0.75)) == [10, 20]
    assert kept(top_p_filter(ids, probs, 0.8)) == [0, 10, 20]  # tie at 0.125: lowest id
    assert kept(top_p_filter(ids, probs, 1.0)) == [0, 10, 20, 30]
    assert kept(top_p_filter(ids, probs, 1e-9)) == [10]  # always at least one
    with pytest.raises(ValueError, match="top_p"):
        top_p_filter(ids, probs, 0.0)


def test_min_p_drops_tokens_below_min_p_times_the_max() -> None:
    ids, probs = arrays([0.5, 0.25, 0.05, 0.2])
    assert kept(min_p_filter(ids, probs, 0.4)) == [0, 10, 30]
    assert kept(min_p_filter(ids, probs, 1.0)) == [0]
    assert kept(min_p_filter(ids, probs, 0.0)) == [0, 10, 20, 30]


def test_xtc_removes_top_choices_but_the_least_likely_of_them() -> None:
    ids, probs = arrays([0.4, 0.3, 0.2, 0.1])
    assert kept(xtc_filter(ids, probs, 0.2)) == [20, 30]
    assert kept(xtc_filter(ids, probs, 0.35)) == [0, 10, 20, 30]  # only one above: no-op
    ids, probs = arrays([0.2, 0.4, 0.2, 0.2])
    assert kept(xtc_filter(ids, probs, 0.2)) == [0]  # least likely tie: lowest id


def reference_top_p(probs: np.ndarray, top_p: float) -> list[int]:
    if top_p >= 1.0:  # off by definition, even where rounding reaches 1.0 early
        return list(range(len(probs)))
    order = np.argsort(-probs, kind="stable")
    cumulative = np.cumsum(probs[order])
    count = int(np.searchsorted(cumulative, top_p * probs.sum(), side="left")) + 1
    return sorted(order[: min(count, len(probs))].tolist())


def reference_top_k(probs: np.ndarray, k: int) -> list[int]:
    order = sorted(range(len(probs)), key=lambda i: (-probs[i], i))
    return sorted(order[:k] if k else order)


distributions = st.lists(
    st.sampled_from([0.0, -0.5, -1.0, -3.0, -5.0, -7.0, -12.0, -20.0, -40.0]),
    min_size=1,
    max_size=300,
).map(lambda logs: np.exp(np.asarray(logs)))


@settings(max_examples=200, deadline=None)
@given(distributions, st.floats(0.001, 1.0), st.integers(0, 40))
def test_head_shortcuts_give_the_full_sort_result(probs: np.ndarray, top_p: float, k: int) -> None:
    ids = np.arange(probs.shape[0], dtype=np.int64)
    assert kept(top_p_filter(ids, probs, top_p)) == reference_top_p(probs, top_p)
    assert kept(top_k_filter(ids, probs, k)) == reference_top_k(probs, k)
