"""Truncation filters: top-k, top-p, min-p and XTC over a candidate set.

Every filter takes and returns ``(ids, probs)``: candidate token ids in ascending order and
their probabilities, unnormalised and > 0 (the sampler passes ``exp(scaled - max)``). Each
filter renormalises implicitly (it only compares within the set), keeps ascending id order
and breaks every tie by the lowest token id, so results are deterministic. None consumes
randomness: XTC's coin flip is made by the sampler, which calls ``xtc_filter`` on heads.

Speed without changing results: top-k and top-p only need the head of the distribution, so
they first take every value >= ``max * r`` for the first ratio r in ``_HEAD_RATIOS`` whose head
is big enough (enough values for top-k, enough mass for top-p), and partition or sort only that
head. The head holds all values above its threshold, so the sorted head is exactly the start
of the sorted whole and the cumulative sums are the same floats: the kept set is identical to
sorting everything, at a fraction of the cost for the peaked distributions of real models.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

IdArray = npt.NDArray[np.int64]
ProbArray = npt.NDArray[np.float64]
_HEAD_RATIOS = (1e-2, 1e-4, 1e-8)


def _head(probs: ProbArray, *, min_count: int = 0, min_mass: float = 0.0) -> IdArray | None:
    """Positions of all values >= ``max * r`` for the first ratio r giving at least
    ``min_count`` values and ``min_mass`` total; None if none does (then use everything)."""
    top = probs.max()
    for ratio in _HEAD_RATIOS:
        mask = probs >= top * ratio
        if np.count_nonzero(mask) >= min_count and (
            min_mass <= 0.0 or probs[mask].sum() >= min_mass
        ):
            return np.flatnonzero(mask)
    return None


def top_k_filter(ids: IdArray, probs: ProbArray, k: int) -> tuple[IdArray, ProbArray]:
    """Keep the ``k`` most likely (ties at the cut: lowest ids); k = 0 keeps all."""
    if k < 0:
        raise ValueError(f"top_k must be >= 0, got {k!r}")
    n = probs.shape[0]
    if k == 0 or k >= n:
        return ids, probs
    head = _head(probs, min_count=k)
    values = probs if head is None else probs[head]
    kth = np.partition(values, values.shape[0] - k)[values.shape[0] - k]  # k-th largest
    keep = probs > kth
    missing = k - int(np.count_nonzero(keep))
    keep[np.flatnonzero(probs == kth)[:missing]] = True
    return ids[keep], probs[keep]


def top_p_filter(ids: IdArray, probs: ProbArray, top_p: float) -> tuple[IdArray, ProbArray]:
    """Keep the smallest most-likely-first set whose probability reaches ``top_p``.

    Order: descending probability, ties by lowest id. At least one token is always kept;
    top_p = 1 keeps all (no sort).
    """
    if not 0.0 < top_p <= 1.0:
        raise ValueError(f"top_p must be in (0, 1], got {top_p!r}")
    n = probs.shape[0]
    if top_p >= 1.0 or n <= 1:
        return ids, probs
    target = top_p * probs.sum()
    head = _head(probs, min_mass=target)
    values = probs if head is None else probs[head]
    # Only the cut value is needed: sort the values (no argsort), find how many of the
    # largest reach the target, then keep everything above the cut value and, among values
    # equal to it, the lowest ids: the same set as a stable descending argsort would keep.
    descending = np.sort(values)[::-1]
    cumulative = np.cumsum(descending)
    count = int(np.searchsorted(cumulative, target, side="left")) + 1
    if count > descending.shape[0]:
        if head is not None:  # rounding left the head just short: use every value
            return top_p_filter_exact(ids, probs, top_p)
        return ids, probs
    if count >= n:
        return ids, probs
    cut = descending[count - 1]
    keep = probs > cut
    missing = count - int(np.count_nonzero(keep))
    keep[np.flatnonzero(probs == cut)[:missing]] = True
    return ids[keep], probs[keep]


def top_p_filter_exact(ids: IdArray, probs: ProbArray, top_p: float) -> tuple[IdArray, ProbArray]:
    """``top_p_filter`` over every value (no head shortcut)."""
    descending = np.sort(probs)[::-1]
    cumulative = np.cumsum(descending)
    count = int(np.searchsorted(cumulative, top_p * probs.sum(), side="left")) + 1
    if count >= probs.shape[0]:
        return ids, probs
    cut = descending[count - 1]
    keep = probs > cut
    missing = count - int(np.count_nonzero(keep))
    keep[np.flatnonzero(probs == cut)[:missing]] = True
    return ids[keep], probs[keep]


def min_p_filter(ids: IdArray, probs: ProbArray, min_p: float) -> tuple[IdArray, ProbArray]:
    """Drop tokens with probability < ``min_p`` times the largest; min_p = 0 keeps all."""
    if not 0.0 <= min_p <= 1.0:
        raise ValueError(f"min_p must be in [0, 1], got {min_p!r}")
    if min_p == 0.0 or probs.shape[0] <= 1:
        return ids, probs
    keep = probs >= min_p * probs.max()
    return ids[keep], probs[keep]


def xtc_filter(ids: IdArray, probs: ProbArray, threshold: float) -> tuple[IdArray, ProbArray]:
    """Exclude Top Choices: if >= 2 tokens have probability >= ``threshold``, drop all of them
    but the least likely (ties: its lowest id). Probabilities are relative to this set."""
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"xtc_threshold must be in [0, 1], got {threshold!r}")
    if probs.shape[0] < 2:
        return ids, probs
    above = probs >= threshold * probs.sum()
    positions = np.flatnonzero(above)
    if positions.shape[0] < 2:
        return ids, probs
    keep = ~above
    keep[positions[np.argmin(probs[positions])]] = True
    return ids[keep], probs[keep]
