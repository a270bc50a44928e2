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
Sets of at most ``_SMALL`` values are sorted or partitioned whole (a head costs more there).
top-p's running sum stops at the cut (``_top_p_cut``), and top-p can take the sorted values
from its caller (``descending``: the sampler sorts through an order hint, or shares one sort
between top-k and top-p, ``top_k_top_p_filter``).
"""

from __future__ import annotations

import numpy as np

from ..arrays import BoolArray, IdArray, ProbArray

_HEAD_RATIOS = (1e-2, 1e-4, 1e-8)
_SMALL = 256


def _head(probs: ProbArray, *, min_count: int = 0, min_mass: float = 0.0) -> IdArray | None:
    """Positions of all values >= ``max * r`` for the first ratio r giving at least
    ``min_count`` values and ``min_mass`` total; None if none does (then use everything)."""
    top = probs[probs.argmax()]
    for ratio in _HEAD_RATIOS:
        mask = probs >= top * ratio
        if np.count_nonzero(mask) >= min_count and (
            min_mass <= 0.0 or probs[mask].sum() >= min_mass
        ):
            return mask.nonzero()[0]
    return None


def top_k_filter(ids: IdArray, probs: ProbArray, k: int) -> tuple[IdArray, ProbArray]:
    """Keep the ``k`` most likely (ties at the cut: lowest ids); k = 0 keeps all."""
    if k < 0:
        raise ValueError(f"top_k must be >= 0, got {k!r}")
    n = probs.shape[0]
    if k == 0 or k >= n:
        return ids, probs
    head = None if n <= _SMALL else _head(probs, min_count=k)
    values = probs if head is None else probs[head]
    kth = np.partition(values, values.shape[0] - k)[values.shape[0] - k]  # k-th largest
    return _keep_largest(ids, probs, k, kth)


def _keep_largest(
    ids: IdArray, probs: ProbArray, count: int, cut: float
) -> tuple[IdArray, ProbArray]:
    """Keep the ``count`` largest values, ``cut`` being the smallest of them: everything above
    ``cut`` and, among the values equal to it, the lowest ids (what a stable descending
    argsort would keep)."""
    keep = probs >= cut
    if np.count_nonzero(keep) != count:  # more ties at the cut than needed
        keep = probs > cut
        missing = count - int(np.count_nonzero(keep))
        keep[(probs == cut).nonzero()[0][:missing]] = True
    return _select(ids, probs, keep)


def _select(
    ids: IdArray, probs: ProbArray, keep: BoolArray
) -> tuple[IdArray, ProbArray]:
    """``ids[keep], probs[keep]`` (one ``nonzero`` and two gathers: half the cost of two
    boolean indexings on large sets)."""
    positions = keep.nonzero()[0]
    n = ids.shape[0]
    if n and ids[0] == 0 and ids[n - 1] == n - 1:  # ascending and unique: ids is arange(n)
        return positions, probs[positions]
    return ids[positions], probs[positions]


def top_p_filter(
    ids: IdArray, probs: ProbArray, top_p: float, *, descending: ProbArray | None = None
) -> tuple[IdArray, ProbArray]:
    """Keep the smallest most-likely-first set whose probability reaches ``top_p``.

    Order: descending probability, ties by lowest id. At least one token is always kept;
    top_p = 1 keeps all (no sort). ``descending``, when given, must be ``probs`` sorted in
    descending order (the sampler can build it cheaply, see ``sampler.sample``'s ``order``);
    then no sort is made here.
    """
    if not 0.0 < top_p <= 1.0:
        raise ValueError(f"top_p must be in (0, 1], got {top_p!r}")
    n = probs.shape[0]
    if top_p >= 1.0 or n <= 1:
        return ids, probs
    target = top_p * probs.sum()
    if descending is not None:
        found = _top_p_cut(descending, target)
    else:
        head = None if n <= _SMALL else _head(probs, min_mass=target)
        found = _top_p_cut(_sorted_descending(probs if head is None else probs[head]), target)
        if found is None and head is not None:  # rounding left the head just short: use all
            found = _top_p_cut(_sorted_descending(probs), target)
    if found is None or found[0] >= n:
        return ids, probs
    return _keep_largest(ids, probs, *found)


def top_k_top_p_filter(
    ids: IdArray, probs: ProbArray, k: int, top_p: float
) -> tuple[IdArray, ProbArray]:
    """``top_p_filter(*top_k_filter(ids, probs, k), top_p)``, with one sort for both when the
    set is small (the k-th largest value and the sorted survivors come from the same sort)."""
    n = probs.shape[0]
    if not 0 < k < n or n > _SMALL or not 0.0 < top_p < 1.0:
        return top_p_filter(*top_k_filter(ids, probs, k), top_p)
    ascending = np.sort(probs)
    ids, probs = _keep_largest(ids, probs, k, ascending[n - k])
    return top_p_filter(ids, probs, top_p, descending=ascending[n - k :][::-1])


def _sorted_descending(values: ProbArray) -> ProbArray:
    return np.sort(values)[::-1]


def _top_p_cut(descending: ProbArray, target: float) -> tuple[int, float] | None:
    """How many of the largest values reach ``target`` (summed largest first, sequentially)
    and the smallest of them; None if all of them fall short (through rounding).

    Only the values (no argsort) are needed. The running sum is taken in chunks, stopping at
    the first chunk that reaches the target; each chunk starts from the previous chunk's
    total, so every partial sum is the same float as in one ``np.cumsum`` over everything.
    After a chunk falls short, the next one is at least twice as long and at least as long as
    a lower bound on how many more values are needed (each is at most the last one summed).
    """
    size = descending.shape[0]
    start, carry, chunk = 0, 0.0, _CUMSUM_CHUNK
    while start < size:
        part = descending[start : start + chunk]
        if start:
            part = part.copy()
            part[0] += carry
        cumulative = part.cumsum()
        if cumulative[-1] >= target:
            count = start + int(cumulative.searchsorted(target, side="left")) + 1
            return count, float(descending[count - 1])
        start += part.shape[0]
        carry = float(cumulative[-1])
        last = float(descending[start - 1])
        needed = (target - carry) / last if last > 0.0 else float(size)
        chunk = max(2 * chunk, 1 + int(min(needed, float(size))))
    return None


_CUMSUM_CHUNK = 512


def min_p_filter(ids: IdArray, probs: ProbArray, min_p: float) -> tuple[IdArray, ProbArray]:
    """Drop tokens with probability < ``min_p`` times the largest; min_p = 0 keeps all."""
    if not 0.0 <= min_p <= 1.0:
        raise ValueError(f"min_p must be in [0, 1], got {min_p!r}")
    if min_p == 0.0 or probs.shape[0] <= 1:
        return ids, probs
    return _select(ids, probs, probs >= min_p * probs[probs.argmax()])


def xtc_filter(ids: IdArray, probs: ProbArray, threshold: float) -> tuple[IdArray, ProbArray]:
    """Exclude Top Choices: if >= 2 tokens have probability >= ``threshold``, drop all of them
    but the least likely (ties: its lowest id). Probabilities are relative to this set."""
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"xtc_threshold must be in [0, 1], got {threshold!r}")
    if probs.shape[0] < 2:
        return ids, probs
    above = probs >= threshold * probs.sum()
    positions = above.nonzero()[0]
    if positions.shape[0] < 2:
        return ids, probs
    keep = ~above
    keep[positions[probs[positions].argmin()]] = True
    return _select(ids, probs, keep)
