"""Interpolated modified Kneser-Ney estimates from the stored counts (Chen & Goodman, 1998).

For a history ``h`` at some level with counts ``c(h, w)`` (raw counts at the top level,
continuation counts below), ``c(h) = sum_w c(h, w)`` and three discounts ``D1, D2, D3+``::

    P(w | h) = alpha(h, w) + gamma(h) * P(w | h[1:])
    alpha(h, w) = (c(h, w) - D(c(h, w))) / c(h)          (0 when w never followed h)
    gamma(h) = (D1 N1(h) + D2 N2(h) + D3+ N3+(h)) / c(h)

and the unigram level interpolates with the uniform distribution ``1 / vocab_size``, so every token
has a non-zero probability. A history never seen at a level passes the lower distribution through
unchanged. Discounts come from each level's count-of-counts ``n1..n4``.

Everything is computed once, at load, for every (history, follower) entry of every level, as
probabilities and as deterministic logs (``detlog``); a query then only copies a few precomputed
slices. Because the lower levels hold continuation counts, a follower of a history is always a
follower of the history's suffix at the level below; that nesting is checked here and is what lets
a query overwrite a dense vector level by level.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .detlog import detlog
from .storage import CountLevel, NgramCounts


@dataclass(frozen=True)
class LevelTables:
    """Query-ready tables of one history length."""

    keys: np.ndarray  # (rows,) packed history, ascending
    offsets: np.ndarray  # (rows + 1,)
    followers: np.ndarray  # (entries,) intp
    probs: np.ndarray  # (entries,) P(w | h) at this level
    logprobs: np.ndarray  # (entries,) detlog of probs
    gamma: np.ndarray  # (rows,) weight of the lower level
    log_gamma: np.ndarray  # (rows,)


@dataclass(frozen=True)
class ModelTables:
    """All levels plus the dense lowest-order distribution."""

    order: int
    vocab_size: int
    base: np.ndarray  # (vocab_size,) unigram KN interpolated with uniform
    log_base: np.ndarray
    levels: tuple[LevelTables, ...]  # history lengths 1 .. order-1
    discounts: tuple[tuple[float, float, float], ...]  # unigram first, then each level


def discounts(counts: np.ndarray) -> tuple[float, float, float]:
    """Modified-KN discounts ``(D1, D2, D3+)`` from count-of-counts, with a safe fallback.

    Tiny corpora can lack counts of 2, 3 or 4 (or give discounts outside ``(0, k)``); then a single
    absolute discount ``n1 / (n1 + 2 n2)`` (or 0.5) is used for all three.
    """
    n1, n2, n3, n4 = (int(np.count_nonzero(counts == k)) for k in (1, 2, 3, 4))
    if n1 and n2 and n3 and n4:
        y = n1 / (n1 + 2 * n2)
        d1 = 1.0 - 2.0 * y * n2 / n1
        d2 = 2.0 - 3.0 * y * n3 / n2
        d3 = 3.0 - 4.0 * y * n4 / n3
        if 0.0 < d1 < 1.0 and 0.0 < d2 < 2.0 and 0.0 < d3 < 3.0:
            return d1, d2, d3
    single = n1 / (n1 + 2 * n2) if n1 and n2 else 0.5
    if not 0.0 < single < 1.0:
        single = 0.5
    return single, single, single


def pack(contexts: np.ndarray, vocab_size: int) -> np.ndarray:
    """Pack history rows into int64 keys, first token most significant."""
    if vocab_size ** (contexts.shape[1] + 1) >= 2**63:
        raise ValueError("vocab_size ** order does not fit in int64 keys")
    keys = np.zeros(contexts.shape[0], dtype=np.int64)
    for column in range(contexts.shape[1]):
        keys = keys * vocab_size + contexts[:, column].astype(np.int64)
    return keys


def _discounted(counts: np.ndarray, d: tuple[float, float, float]) -> tuple[np.ndarray, np.ndarray]:
    """``c - D(c)`` per entry, and the per-entry discount table index ``min(c, 3)``."""
    table = np.array([0.0, d[0], d[1], d[2]], dtype=np.float64)
    capped = np.minimum(counts, 3)
    return counts.astype(np.float64) - table[capped], capped


def _lower_weight(
    capped: np.ndarray, starts: np.ndarray, d: tuple[float, float, float]
) -> np.ndarray:
    """``D1 N1 + D2 N2 + D3+ N3+`` per row (integer counts first, so sums are exact)."""
    n = [np.add.reduceat((capped == k).astype(np.int64), starts) for k in (1, 2, 3)]
    weight = np.multiply(n[0].astype(np.float64), d[0])
    weight = np.add(weight, np.multiply(n[1].astype(np.float64), d[1]))
    return np.add(weight, np.multiply(n[2].astype(np.float64), d[2]))


def _unigram(counts: np.ndarray, vocab_size: int) -> tuple[np.ndarray, tuple[float, float, float]]:
    total = int(counts.sum())
    d = discounts(counts[counts > 0])
    if total == 0:
        return np.full(vocab_size, 1.0 / vocab_size), d
    numerator, capped = _discounted(counts, d)
    weight = _lower_weight(capped, np.zeros(1, dtype=np.intp), d)
    gamma = float(weight[0]) / total
    base = np.add(np.divide(numerator, float(total)), gamma / vocab_size)
    return base, d


def _parent_entries(
    level: CountLevel, parent_keys: np.ndarray, parent_flat: np.ndarray, vocab_size: int
) -> np.ndarray:
    """Index, in the level below, of the entry (history suffix, same follower) of each entry."""
    rows = np.repeat(np.arange(level.contexts.shape[0]), np.diff(level.offsets))
    suffix_keys = pack(level.contexts[:, 1:], vocab_size)
    parent_rows = np.searchsorted(parent_keys, suffix_keys)
    parent_rows = np.minimum(parent_rows, parent_keys.size - 1)
    if not np.array_equal(parent_keys[parent_rows], suffix_keys):
        raise ValueError("n-gram tables are not nested: a history suffix is missing")
    wanted = parent_rows[rows].astype(np.int64) * vocab_size + level.followers
    entries = np.minimum(np.searchsorted(parent_flat, wanted), parent_flat.size - 1)
    if not np.array_equal(parent_flat[entries], wanted):
        raise ValueError("n-gram tables are not nested: a follower is missing below")
    return entries


def estimate(counts: NgramCounts) -> ModelTables:
    """Compute every level's interpolated probabilities and logs from the counts."""
    vocab_size = counts.vocab_size
    base, unigram_d = _unigram(counts.unigram, vocab_size)
    all_d = [unigram_d]
    levels: list[LevelTables] = []
    below_probs = base
    below_keys = np.zeros(0, dtype=np.int64)
    below_flat = np.zeros(0, dtype=np.int64)
    for level in counts.levels:
        keys = pack(level.contexts, vocab_size)
        starts = level.offsets[:-1].astype(np.intp)
        rows = np.repeat(np.arange(keys.size), np.diff(level.offsets))
        d = discounts(level.counts)
        all_d.append(d)
        totals = np.add.reduceat(level.counts, starts).astype(np.float64)
        numerator, capped = _discounted(level.counts, d)
        gamma = np.divide(_lower_weight(capped, starts, d), totals)
        if level.history_length == 1:
            lower = below_probs[level.followers]
        else:
            lower = below_probs[_parent_entries(level, below_keys, below_flat, vocab_size)]
        probs = np.add(np.divide(numerator, totals[rows]), np.multiply(gamma[rows], lower))
        levels.append(
            LevelTables(
                keys=keys,
                offsets=level.offsets.astype(np.intp),
                followers=level.followers.astype(np.intp),
                probs=probs,
                logprobs=detlog(probs),
                gamma=gamma,
                log_gamma=detlog(gamma),
            )
        )
        below_probs = probs
        below_keys = keys
        below_flat = rows.astype(np.int64) * vocab_size + level.followers
    for table in levels:
        for array in (table.keys, table.offsets, table.followers, table.probs, table.logprobs):
            array.flags.writeable = False
    log_base = detlog(base)
    base.flags.writeable = False
    log_base.flags.writeable = False
    return ModelTables(
        order=counts.order,
        vocab_size=vocab_size,
        base=base,
        log_base=log_base,
        levels=tuple(levels),
        discounts=tuple(all_d),
    )
