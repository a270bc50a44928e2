"""The sampler's draw without the dense distribution, giving exactly ``sample``'s token.

``sample`` (no truncation) maps ``u = rng.random()`` to a token by an inverse CDF over
``exp(logprobs / temperature - max)`` in ascending id order, summed in floats (``_draw``). Over
a model context (``model.sparse``: level-1 row, deeper rows, scales) the same CDF is, up to
rounding, at the row's follower of level-1 entry ``e`` and in the gaps between followers,

    CDF(e) = g * nf[e] + c1 * cw1[e] + D(e)        CDF(w) = g * B(w) + offset of the gap

with, per temperature and for the whole model (``RowWeights``, built once): ``B`` the running
sum of the base weights, ``cw1`` the running sum of each level-1 row's own weights and ``nf``
the base mass of the row's non-followers up to ``e``; per context (``ChainCdf``, kept in the
view's memo): the scales ``g`` and ``c1`` and the running correction ``D`` at the few entries
deeper levels override. A bisection over the row's entries, then over ``B`` in the gap, finds
the token in O(log vocabulary) Python steps, without exponentiating 4,096 values per token.

Exactness: both CDFs are within ~1e-12 of the real-number CDF (``vocab * few ulp``, all
weights at most 1 and the total at least 1), so whenever ``u * total`` lies more than
``MARGIN`` (1e-8 of the total: 10,000 times that bound) inside a token's interval here,
``sample`` picks the same token. Otherwise ``draw`` returns None and the caller runs
``sample`` itself with the same ``u``: that happens for about ``2 * MARGIN`` per boundary near
``u``, i.e. almost never. The result is ``sample``'s token for every ``u``, on every machine;
tests compare the two over random requests and at the boundaries.
"""

from __future__ import annotations

import bisect
import math
import threading
from collections.abc import Callable, Sequence

import numpy as np

from ..arrays import FloatArray, IndexArray
from ..model.sparse import SparseLogprobs, SparseTables, frozen
from .logprobs import banned_normaliser
from .params import SamplingParams
from .sampler import RandomSource, TokenFilter, sample

MARGIN = 1e-8
_TEMPERATURES = 8  # per-temperature tables kept per context and per model


def _row_cumsum(values: FloatArray, offsets: IndexArray, rows: IndexArray) -> FloatArray:
    """Running sums restarting at every row (global sums minus the row's start: accurate to
    ~1e-12 here, far inside ``MARGIN``)."""
    running = np.cumsum(values)
    before = np.concatenate(([0.0], running))[offsets[:-1]]
    return np.subtract(running, before[rows])


class RowWeights:
    """Per temperature, what every context's CDF is built from, for the whole model.

    The base weights ``bw = exp((log_base - max) / temperature)`` and their running sum ``B``;
    per level-1 entry ``e`` (row ``r``, follower ``f``): ``w1 = exp((value - max of the row) /
    temperature)`` and its running sum within the row (inclusive and exclusive), and ``nf``,
    the base mass of the tokens up to ``f`` that are not followers of the row. Accuracy, not
    bits, matters here (``ChainCdf`` only trusts a token far from any boundary), so NumPy's
    exp and cumsum are fine.
    """

    def __init__(self, tables: SparseTables, temperature: float) -> None:
        self.temperature = temperature
        log_base = tables.log_base
        self.base_top = float(log_base.max())
        base = np.exp(np.divide(np.subtract(log_base, self.base_top), temperature))
        inclusive = np.cumsum(base)
        self.base_list: tuple[float, ...] = frozen(inclusive)
        self.base_total = float(inclusive[-1])
        offsets = np.asarray(tables.offsets[0], dtype=np.intp)
        followers = tables.followers[0]
        values = tables.level_values[0]
        rows = np.repeat(np.arange(offsets.shape[0] - 1), np.diff(offsets))
        row_top = np.maximum.reduceat(values, offsets[:-1])
        self.row_top: tuple[float, ...] = frozen(row_top)
        w1 = np.exp(np.divide(np.subtract(values, row_top[rows]), temperature))
        cw1 = _row_cumsum(w1, offsets, rows)
        cb = _row_cumsum(base[followers], offsets, rows)
        self.w1: tuple[float, ...] = frozen(w1)
        self.cw1: tuple[float, ...] = frozen(cw1)
        self.cw1_before: tuple[float, ...] = frozen(np.subtract(cw1, w1))
        self.cb: tuple[float, ...] = frozen(cb)
        self.nf: tuple[float, ...] = frozen(np.subtract(inclusive[followers], cb))


class _Weights:
    """``RowWeights`` per (model tables, temperature), built once a temperature has been
    asked for ``WARM_STEPS`` times (building costs a few ms: a temperature seen in one short
    request is cheaper on the exact path)."""

    WARM_STEPS = 64

    def __init__(self) -> None:
        self._built: dict[tuple[SparseTables, float], RowWeights] = {}
        self._asked: dict[tuple[SparseTables, float], int] = {}
        self._lock = threading.Lock()

    def get(self, tables: SparseTables, temperature: float) -> RowWeights | None:
        """The tables, or None while the temperature is not warm yet."""
        key = (tables, temperature)
        found = self._built.get(key)
        if found is not None:
            return found
        with self._lock:
            asked = self._asked.get(key, 0) + 1
            if len(self._asked) > 4096:
                self._asked.clear()
            self._asked[key] = asked
        return self.build(tables, temperature) if asked >= self.WARM_STEPS else None

    def build(self, tables: SparseTables, temperature: float) -> RowWeights:
        """Build (or return) the tables now."""
        key = (tables, temperature)
        found = self._built.get(key)
        if found is not None:
            return found
        built = RowWeights(tables, temperature)
        with self._lock:
            if len(self._built) >= _TEMPERATURES:
                self._built.pop(next(iter(self._built)))
            return self._built.setdefault(key, built)


WEIGHTS = _Weights()


class ChainCdf:
    """One context's CDF at one temperature (see the module docstring):

    ``CDF`` at level-1 entry ``e`` (follower ``f``) is ``g * nf[e] + c1 * cw1[e] + D(e)``, with
    ``c1`` and ``g`` the scales of the row's and the base weights and ``D`` the running sum of
    the deeper levels' corrections at the few entries they override; in the gap between two
    followers, ``g * B(w)`` plus the CDF of the followers below.
    """

    __slots__ = ("c1", "deep", "deep_sums", "deep_values", "first", "g", "ref", "scales",
                 "stop", "tables", "temperature", "total", "weights")

    def __init__(self, view: SparseLogprobs, weights: RowWeights) -> None:
        tables = view.tables
        temperature = weights.temperature
        self.tables = tables
        self.weights = weights
        rows, scales = view.rows, view.scales
        if rows:
            row = rows[0]
            first, stop = tables.offsets[0][row], tables.offsets[0][row + 1]
            row_top = weights.row_top[row] + scales[1]
            deep, values = _deep_entries(tables, rows, scales)
        else:
            first = stop = 0
            row_top = -math.inf
            deep, values = (), []
        base_top = weights.base_top + scales[0]
        ref = row_top if row_top > base_top else base_top
        if values:
            top = max(values)
            if top > ref:
                ref = top
        self.ref = ref
        self.temperature = temperature
        self.first, self.stop = first, stop
        self.c1 = c1 = math.exp((row_top - ref) / temperature)
        self.g = g = math.exp((base_top - ref) / temperature)
        self.deep = deep
        self.deep_values = values  # exact: the dense array's bits at those entries
        self.scales = scales
        running = 0.0
        sums = [running]
        w1 = weights.w1
        exp = math.exp
        for entry, value in zip(deep, values, strict=True):
            running = running + exp((value - ref) / temperature) - c1 * w1[entry]
            sums.append(running)
        self.deep_sums = sums
        total = g * weights.base_total + running
        if stop > first:
            total += c1 * weights.cw1[stop - 1] - g * weights.cb[stop - 1]
        self.total = total

    def post(self, entry: int) -> float:
        """The CDF up to and including level-1 entry ``entry``'s follower."""
        weights = self.weights
        deep = self.deep_sums[bisect.bisect_right(self.deep, entry)] if self.deep else 0.0
        return self.g * weights.nf[entry] + self.c1 * weights.cw1[entry] + deep

    def weight(self, value: float) -> float:
        """The weight of a logprob ``value`` of this context, in the CDF's scale."""
        return math.exp((value - self.ref) / self.temperature)

    def below(self, token: int) -> float:
        """The CDF of every id below ``token``."""
        first, stop = self.first, self.stop
        entry = bisect.bisect_left(self.tables.follower_lists[0], token, first, stop)
        if entry < stop and self.tables.follower_lists[0][entry] == token:
            return self._follower_lower(entry)
        base = self.weights.base_list[token - 1] if token else 0.0
        return self.g * base + self._gap_offset(entry)

    def _follower_lower(self, entry: int) -> float:
        """The CDF below level-1 entry ``entry``'s follower."""
        below = self.deep_sums[bisect.bisect_left(self.deep, entry)] if self.deep else 0.0
        weights = self.weights
        return self.g * weights.nf[entry] + self.c1 * weights.cw1_before[entry] + below

    def _gap_offset(self, entry: int) -> float:
        """In the gap of non-followers just below level-1 entry ``entry``: the CDF of the
        followers below it minus their base weights' part (the CDF there is
        ``g * base_list[token] + offset``)."""
        if entry <= self.first:
            return 0.0
        below = self.deep_sums[bisect.bisect_right(self.deep, entry - 1)] if self.deep else 0.0
        weights = self.weights
        return self.c1 * weights.cw1[entry - 1] + below - self.g * weights.cb[entry - 1]

    def token(self, u: float, banned: tuple[tuple[int, float], ...] = ()
              ) -> tuple[int, float] | None:
        """The token ``sample`` draws for ``u`` and its exact logprob, or None when ``u`` is
        too close to a boundary (or the tables are degenerate) to be sure.

        ``banned``: ``(id, weight)`` pairs in ascending id order whose logprob the
        processors set to -inf (end-of-text before ``min_tokens``): the draw is then over the
        CDF without them, ``u`` times the rest of the total, stepped over each banned
        interval it reaches. The logprob returned is still the view's (the caller
        re-normalises it)."""
        total = self.total
        if not total > 0.5 or not math.isfinite(total):  # at least the top weight, ~1
            return None
        if not banned:
            return self._at(u * total, total)
        rest = total - sum(weight for _, weight in banned)
        if not rest > MARGIN * total:
            return None
        target = u * rest
        for token, weight in banned:
            if target >= self.below(token):
                target += weight
        found = self._at(target, total)
        if found is not None and any(found[0] == token for token, _ in banned):
            return None
        return found

    def _at(self, target: float, total: float) -> tuple[int, float] | None:
        """The token whose interval holds ``target`` (at least ``MARGIN * total`` inside)."""
        first, stop, g, c1 = self.first, self.stop, self.g, self.c1
        weights = self.weights
        nf, cw1, deep, sums = weights.nf, weights.cw1, self.deep, self.deep_sums
        low, high = first, stop  # the first entry whose CDF exceeds target (inline bisection)
        while low < high:
            middle = (low + high) // 2
            post = g * nf[middle] + c1 * cw1[middle]
            if deep:
                post += sums[bisect.bisect_right(deep, middle)]
            if target < post:
                high = middle
            else:
                low = middle + 1
        entry = low
        followers = self.tables.follower_lists[0]
        if entry < stop:
            lower = self._follower_lower(entry)
            if target >= lower:
                if not _inside(target, lower, self.post(entry), total):
                    return None
                return followers[entry], self._follower_value(entry)
        if not g > 0.0:
            return None
        offset = self._gap_offset(entry)
        cumulative = weights.base_list
        token = bisect.bisect_right(cumulative, (target - offset) / g)
        if token >= len(cumulative):
            return None
        if (entry > first and token <= followers[entry - 1]) or (
            entry < stop and token >= followers[entry]
        ):
            return None
        lower = g * (cumulative[token - 1] if token else 0.0) + offset
        if not _inside(target, lower, g * cumulative[token] + offset, total):
            return None
        return token, self.tables.log_base_list[token] + self.scales[0]

    def _follower_value(self, entry: int) -> float:
        """The dense array's value at level-1 entry ``entry``'s follower (``SparseLogprobs
        .value``'s arithmetic: the deepest level's value plus its scale unless 0)."""
        deep = self.deep
        if deep:
            at = bisect.bisect_left(deep, entry)
            if at < len(deep) and deep[at] == entry:
                return self.deep_values[at]
        value = self.tables.value_lists[0][entry]
        scale = self.scales[1]
        return value + scale if scale != 0.0 else value


def _deep_entries(tables: SparseTables, rows: tuple[int, ...], scales: tuple[float, ...]
                  ) -> tuple[Sequence[int], list[float]]:
    """The level-1 entries that deeper levels override, ascending, and their values (the
    dense array's bits: the deepest level's value plus its scale unless 0).

    Followers nest (a longer history's followers are among a shorter one's), so the entries
    are those of the level-2 row, already in order (``to_first`` keeps the order of the
    followers); each deeper level overwrites the values of its own, found by bisection."""
    if len(rows) < 2:
        return (), []
    offsets = tables.offsets[1]
    start, end = offsets[rows[1]], offsets[rows[1] + 1]
    deep = tables.to_first[1][start:end]
    scale = scales[2]
    if scale != 0.0:
        values = [value + scale for value in tables.value_lists[1][start:end]]
    else:
        values = list(tables.value_lists[1][start:end])  # deeper levels overwrite some
    for level in range(2, len(rows)):
        offsets = tables.offsets[level]
        start, end = offsets[rows[level]], offsets[rows[level] + 1]
        scale = scales[level + 1]
        level_values = tables.value_lists[level]
        to_first = tables.to_first[level]
        low = 0
        for entry in range(start, end):
            low = bisect.bisect_left(deep, to_first[entry], low)
            value = level_values[entry]
            values[low] = value + scale if scale != 0.0 else value
    return deep, values


def _inside(target: float, lower: float, upper: float, total: float) -> bool:
    margin = MARGIN * total
    return target - lower >= margin and upper - target >= margin


def chain_cdf(view: SparseLogprobs, temperature: float) -> ChainCdf | None:
    """The context's CDF at ``temperature``, kept in the view's memo; None while the
    temperature's tables are not built (see ``_Weights``)."""
    key = ("cdf", temperature)
    found = view.memo.get(key)
    if found is None:
        weights = WEIGHTS.get(view.tables, temperature)
        if weights is None:
            return None
        if len(view.memo) > 2 * _TEMPERATURES:
            view.memo.clear()
        found = view.memo[key] = ChainCdf(view, weights)
    return found  # type: ignore[return-value]


def draw(view: SparseLogprobs, temperature: float, u: float) -> tuple[int, float] | None:
    """``sample``'s token for ``u`` at ``temperature`` without truncation and its logprob,
    or None (then run ``sample`` with the same ``u``); see the module docstring."""
    cdf = chain_cdf(view, temperature)
    return None if cdf is None else cdf.token(u)


class _Replay:
    """A random source that first returns a number already drawn, then the real source's."""

    __slots__ = ("_first", "_rng")

    def __init__(self, first: float, rng: RandomSource) -> None:
        self._first: float | None = first
        self._rng = rng

    def random(self) -> float:
        first = self._first
        if first is None:
            return self._rng.random()
        self._first = None
        return first


def sparse_path(params: SamplingParams) -> bool:
    """Whether ``sample_sparse`` serves ``params``: greedy, or sampling without truncation."""
    return params.greedy or not params.truncates


def sample_sparse(
    view: SparseLogprobs,
    params: SamplingParams,
    rng: RandomSource,
    *,
    allowed: TokenFilter | None = None,
    banned: tuple[int, ...] = (),
    processed: Callable[[], FloatArray] | None = None,
) -> tuple[int, float]:
    """``sample(processed(), params, rng, allowed=allowed)`` for the params ``sparse_path``
    accepts, and the token's logprob (``processed()[token]``): the same token, the same
    ``rng`` calls and the same bits, mostly without the dense array (it is used when the
    token filter rejects the pick or ``draw`` cannot be sure).

    ``processed`` is ``process_logits``' array for this step: ``view.dense()`` (the default)
    when no processor is on, or that array with ``banned`` (ascending ids) set to -inf and
    re-normalised, the end-of-text ban before ``min_tokens`` (``_sample_banned``).
    """
    if banned:
        if processed is None:
            raise ValueError("banned ids need the processed array for the exact path")
        return _sample_banned(view, params, rng, allowed, banned, processed)
    if params.greedy:
        token, value = view.top(1)[0]
        if allowed is None or allowed(token):
            return token, value
        return _exact(view.dense(), params, rng, allowed)
    u = rng.random()
    drawn = draw(view, params.temperature, u)
    if drawn is not None and (allowed is None or allowed(drawn[0])):
        return drawn
    return _exact(view.dense(), params, _Replay(u, rng), allowed)


def _sample_banned(view: SparseLogprobs, params: SamplingParams, rng: RandomSource,
                   allowed: TokenFilter | None, banned: tuple[int, ...],
                   processed: Callable[[], FloatArray]) -> tuple[int, float]:
    """``sample_sparse`` with ``banned`` at -inf: the draw steps over their intervals
    (``ChainCdf.token``), and every other value is the view's minus the normaliser
    ``log_softmax`` subtracts (``banned_normaliser``: the same float)."""
    values = tuple(view.value(token) for token in banned)
    normaliser = banned_normaliser(values)
    if normaliser is None:
        return _exact(processed(), params, rng, allowed)
    if params.greedy:
        token, value = view.top(1)[0]
        if token not in banned and (allowed is None or allowed(token)):
            return token, value - normaliser
        return _exact(processed(), params, rng, allowed)
    u = rng.random()
    cdf = chain_cdf(view, params.temperature)
    drawn = None if cdf is None else cdf.token(u, tuple(
        (token, cdf.weight(value)) for token, value in zip(banned, values, strict=True)
        if value != -math.inf))
    if drawn is not None and (allowed is None or allowed(drawn[0])):
        return drawn[0], drawn[1] - normaliser
    return _exact(processed(), params, _Replay(u, rng), allowed)


def _exact(processed: FloatArray, params: SamplingParams, rng: RandomSource,
           allowed: TokenFilter | None) -> tuple[int, float]:
    """``sample``'s token over the dense array, and its value there."""
    token = sample(processed, params, rng, allowed=allowed)
    return token, float(processed[token])
