"""sample / greedy / SeededRng: the inverse-CDF draw, RNG consumption, temperature, truncation
order and the lazy token filter's exactness."""

from __future__ import annotations

import random
from collections.abc import Iterable

import numpy as np
import pytest

from reference_engine.sampling import (
    NoAllowedTokenError,
    SamplingParams,
    SeededRng,
    greedy,
    log_softmax,
    sample,
)


class FixedRng:
    """Replays given uniforms; counts calls."""

    def __init__(self, values: Iterable[float]) -> None:
        self.values = list(values)
        self.calls = 0

    def random(self) -> float:
        self.calls += 1
        return self.values.pop(0)


class SetFilter:
    """A TokenFilter allowing a fixed set of ids; counts single checks and bulk masks."""

    def __init__(self, allowed: set[int]) -> None:
        self.allowed = allowed
        self.checks = 0
        self.masks = 0

    def __call__(self, token_id: int) -> bool:
        self.checks += 1
        return token_id in self.allowed

    def mask(self, token_ids: np.ndarray) -> np.ndarray:
        self.masks += 1
        return np.isin(token_ids, sorted(self.allowed))


def logprobs(probs: list[float]) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(np.asarray(probs, dtype=np.float64))


def distribution(x: np.ndarray, params: SamplingParams, allowed=None, n: int = 4000) -> np.ndarray:
    """The exact pick distribution: sample at n evenly spaced uniforms (the XTC coin, when
    active, comes up heads)."""
    counts = np.zeros(x.shape[0])
    for i in range(n):
        u = (i + 0.5) / n
        counts[
            sample(x, params, FixedRng([0.0, u] if params.xtc_active else [u]), allowed=allowed)
        ] += 1
    return counts / n


def test_seeded_rng_is_the_stdlib_sequence_and_counts_calls() -> None:
    rng = SeededRng(42)
    reference = random.Random(42)
    assert [rng.random() for _ in range(5)] == [reference.random() for _ in range(5)]
    assert rng.calls == 5
    assert SeededRng(-1).random() != SeededRng(1).random()  # the int64 range is distinct
    with pytest.raises(TypeError, match="seed"):
        SeededRng(1.5)  # type: ignore[arg-type]


def test_inverse_cdf_over_ascending_ids() -> None:
    x = logprobs([0.25, 0.25, 0.5])
    params = SamplingParams()
    picks = [sample(x, params, FixedRng([u])) for u in (0.0, 0.2, 0.25, 0.49, 0.5, 0.99999)]
    assert picks == [0, 0, 1, 1, 2, 2]


def test_one_random_call_per_sampled_step_none_when_greedy_two_with_xtc() -> None:
    x = logprobs([0.2, 0.3, 0.5])
    for params, calls in (
        (SamplingParams(), 1),
        (SamplingParams(top_k=2, top_p=0.9, min_p=0.1, temperature=0.5), 1),
        (SamplingParams(xtc_threshold=0.1, xtc_probability=0.5), 2),
        (SamplingParams(temperature=0.0, xtc_threshold=0.1, xtc_probability=1.0), 0),
    ):
        rng = SeededRng(7)
        sample(x, params, rng)
        assert rng.calls == calls, params


def test_greedy_is_argmax_with_lowest_id_ties() -> None:
    assert greedy(np.array([-2.0, -1.0, -1.0, -3.0])) == 1
    assert sample(np.array([-2.0, -0.5, -0.5]), SamplingParams(temperature=0), FixedRng([])) == 1
    with pytest.raises(NoAllowedTokenError):
        greedy(np.full(3, -np.inf))


def test_minus_infinity_is_never_drawn() -> None:
    x = logprobs([0.5, 0.0, 0.5, 0.0])
    assert set(np.flatnonzero(distribution(x, SamplingParams()))) == {0, 2}


def test_temperature_scales_the_distribution() -> None:
    x = logprobs([0.2, 0.3, 0.5])
    for temperature in (0.5, 1.0, 1.7):
        expected = np.exp(log_softmax(x / temperature))
        got = distribution(x, SamplingParams(temperature=temperature))
        np.testing.assert_allclose(got, expected, atol=1e-3)


def test_truncation_runs_top_k_then_top_p_then_min_p_then_xtc() -> None:
    x = logprobs([0.05, 0.4, 0.3, 0.15, 0.1])
    got = distribution(x, SamplingParams(top_k=3))  # keeps 1, 2, 3
    np.testing.assert_allclose(got, [0, 0.4 / 0.85, 0.3 / 0.85, 0.15 / 0.85, 0], atol=1e-3)
    got = distribution(x, SamplingParams(top_k=3, top_p=0.8))  # of 1,2,3: 1 and 2 reach 0.8
    np.testing.assert_allclose(got, [0, 4 / 7, 3 / 7, 0, 0], atol=1e-3)
    got = distribution(x, SamplingParams(min_p=0.3))  # drops < 0.12: tokens 0 and 4
    np.testing.assert_allclose(got, [0, 0.4 / 0.85, 0.3 / 0.85, 0.15 / 0.85, 0], atol=1e-3)
    got = distribution(x, SamplingParams(top_k=3, xtc_threshold=0.2, xtc_probability=1.0))
    np.testing.assert_allclose(got, [0, 0, 0.3 / 0.45, 0.15 / 0.45, 0], atol=1e-3)
    tails = SamplingParams(top_k=3, xtc_threshold=0.2, xtc_probability=0.5)
    assert sample(x, tails, FixedRng([0.9, 0.0])) == 1  # coin 0.9 >= 0.5: no exclusion


def test_filter_is_asked_once_when_the_draw_is_valid() -> None:
    token_filter = SetFilter({0, 1, 2})
    assert (
        sample(logprobs([0.5, 0.5, 0.0]), SamplingParams(), FixedRng([0.7]), allowed=token_filter)
        == 1
    )
    assert (token_filter.checks, token_filter.masks) == (1, 0)


def test_lazy_filter_draws_exactly_from_the_renormalised_valid_set() -> None:
    x = logprobs([0.3, 0.3, 0.4])  # the counter-example to naive re-drawing with the same u
    got = distribution(x, SamplingParams(), allowed=SetFilter({0, 1}))
    np.testing.assert_allclose(got, [0.5, 0.5, 0.0], atol=1e-3)
    x = logprobs([0.1, 0.2, 0.15, 0.05, 0.3, 0.2])
    got = distribution(x, SamplingParams(temperature=0.8, top_k=5), allowed=SetFilter({1, 3, 5}))
    kept = np.exp(log_softmax(x / 0.8))
    kept[[0, 2, 4]] = 0.0  # invalid
    kept[3] = 0.0  # valid, but top_k=5 truncated it first
    np.testing.assert_allclose(got, kept / kept.sum(), atol=1e-3)


def test_filter_falls_back_to_untruncated_valid_tokens() -> None:
    x = logprobs([0.6, 0.1, 0.3])
    got = distribution(x, SamplingParams(top_k=1), allowed=SetFilter({1, 2}))
    np.testing.assert_allclose(got, [0.0, 0.25, 0.75], atol=1e-3)
    assert greedy(x, allowed=SetFilter({1, 2})) == 2
    with pytest.raises(NoAllowedTokenError):
        sample(x, SamplingParams(), FixedRng([0.1]), allowed=SetFilter(set()))
    with pytest.raises(NoAllowedTokenError):
        greedy(x, allowed=SetFilter(set()))


def test_same_seed_same_draws_and_empirical_frequencies() -> None:
    x = logprobs([0.1, 0.2, 0.3, 0.4])
    params = SamplingParams()
    a = [sample(x, params, rng) for rng in [SeededRng(3)] for _ in range(4000)]
    b = [sample(x, params, rng) for rng in [SeededRng(3)] for _ in range(4000)]
    assert a == b
    np.testing.assert_allclose(np.bincount(a, minlength=4) / 4000, [0.1, 0.2, 0.3, 0.4], atol=0.03)


def test_rejects_non_vectors() -> None:
    with pytest.raises(ValueError, match="processed_logprobs"):
        sample(np.zeros((2, 2)), SamplingParams(), FixedRng([0.5]))
