"""A context's next-token logprobs as the model builds them: a few followers plus one shift.

``LanguageModel.logprobs`` writes ``log base + shift`` over the whole vocabulary and then
overwrites the followers of the context's histories (see ``language_model``). Every token that
is not a follower of the shortest history (the longer histories' followers are among its
followers) keeps ``log_base[w] + shift``. So the dense array is fully described by

* ``followers``: the shortest history's followers, ascending (a few to a few hundred ids),
* ``values``: their logprobs, computed by the same IEEE operations in the same order as the
  dense array's entries, hence the same bits,
* ``shift``: the scalar added to ``log_base`` everywhere else.

Samplers that only need a token's value, the maximum or the k best tokens read them here in
O(followers) instead of O(vocabulary), with the dense array's exact bits; ``dense()`` is the
array ``logprobs`` returns, for the exact paths that need it.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..arrays import FloatArray, IndexArray
from .kneser_ney import LevelTables


def frozen(array: npt.NDArray[np.generic]) -> tuple[Any, ...]:
    """``array`` as a tuple of Python numbers, for the scalar code that reads the tables.

    A tuple, not a list: indexing costs the same, but a tuple of numbers holds no reference
    the cyclic garbage collector has to follow, so CPython stops tracking it after its first
    look, and the tables (~1.5 million entries) no longer make every full collection ~20 ms
    longer (the mock's p99 latency)."""
    return tuple(array.tolist())


class SparseTables:
    """What every context's sparse view shares: the base logprobs and their order, and every
    level's rows, as lists where scalar code reads them (Python floats are IEEE doubles:
    ``log_base[w] + shift`` is the same add as NumPy's, so the bits are the same).

    ``to_first[level][e]``: for entry ``e`` of a deeper level, the entry of the same follower
    in the level-1 row of the same last token (followers nest, see ``kneser_ney``).
    """

    def __init__(self, log_base: FloatArray, descending_base: IndexArray,
                 levels: Sequence[LevelTables]) -> None:
        self.log_base = log_base
        self.log_base_list: tuple[float, ...] = frozen(log_base)
        self.descending_list: tuple[int, ...] = frozen(descending_base)
        self.vocab_size = vocab = int(log_base.shape[0])
        self.offsets = [frozen(level.offsets) for level in levels]
        self.followers = [level.followers for level in levels]
        self.follower_lists: list[tuple[int, ...]] = [frozen(level.followers)
                                                      for level in levels]
        self.level_values = [level.logprobs for level in levels]
        self.value_lists: list[tuple[float, ...]] = [frozen(level.logprobs)
                                                     for level in levels]
        first = levels[0]
        first_rows = np.repeat(np.arange(first.keys.size), np.diff(first.offsets))
        first_flat = first_rows.astype(np.int64) * vocab + first.followers
        row_of_token = np.full(vocab, -1, dtype=np.int64)
        row_of_token[first.keys] = np.arange(first.keys.size)
        self._others: dict[int, tuple[int, ...]] = {}
        self._orders: dict[tuple[int, int], tuple[int, ...]] = {}
        self.to_first: list[tuple[int, ...]] = [()]
        for level in levels[1:]:
            rows = np.repeat(np.arange(level.keys.size), np.diff(level.offsets))
            last = row_of_token[level.keys % vocab][rows]
            self.to_first.append(frozen(np.searchsorted(first_flat,
                                                        last * vocab + level.followers)))

    def row_order(self, level: int, row: int) -> tuple[int, ...]:
        """The entries of ``level``'s row ``row`` by value, largest first (ties: lowest entry,
        i.e. lowest id), sorted once per row. Adding a row's scale keeps this order (rounding
        is monotone), so it is the order of the dense array's values too, up to ties. Kept
        for every row met: at most one int per entry of the model (~183,000, ~7 MB)."""
        key = (level, row)
        found = self._orders.get(key)
        if found is None:
            offsets, values = self.offsets[level], self.value_lists[level]
            found = tuple(sorted(range(offsets[row], offsets[row + 1]),
                                 key=lambda e: -values[e]))
            self._orders[key] = found
        return found

    OTHERS = 32  # non-followers listed per level-1 row (top logprobs asks for at most 20)

    def others(self, row: int) -> tuple[int, ...]:
        """The first ``OTHERS`` ids in ``descending_base`` order that do not follow level-1
        row ``row`` (built once per row: the head of that order is mostly followers)."""
        found = self._others.get(row)
        if found is None:
            offsets = self.offsets[0]
            followers = set(self.follower_lists[0][offsets[row] : offsets[row + 1]])
            head: list[int] = []
            for token in self.descending_list:
                if token not in followers:
                    head.append(token)
                    if len(head) == self.OTHERS:
                        break
            found = self._others[row] = tuple(head)
        return found


class SparseLogprobs:
    """One context's logprobs: ``values`` at ``followers``, ``log_base + shift`` elsewhere.

    ``rows`` (the context's row per level) and ``scales`` (``scales[0]`` is the shift; level
    ``l``'s values get ``scales[l]`` added unless it is 0) are what ``language_model`` builds
    the dense array from; ``followers`` and ``values`` are built from them on first use, so a
    sampler that needs neither pays nothing for them. ``memo`` holds what samplers derive from
    the view (per temperature, say): it lives as long as the view in the model's cache.
    A plain class: one is made per new context, and a dataclass's frozen ``__init__`` costs
    several times as much.
    """

    def __init__(self, rows: tuple[int, ...], scales: tuple[float, ...], tables: SparseTables,
                 dense: Callable[[], FloatArray]) -> None:
        self.rows = rows
        self.scales = scales
        self.tables = tables
        self.dense = dense  # the model's dense array for this context (cached there)
        self.memo: dict[object, object] = {}

    @property
    def shift(self) -> float:
        """What every non-follower adds to its ``log_base``."""
        return self.scales[0]

    @functools.cached_property
    def _arrays(self) -> tuple[IndexArray, FloatArray]:
        if not self.rows:
            return np.zeros(0, dtype=np.intp), np.zeros(0)
        tables = self.tables
        return sparse_values(tables.offsets, tables.followers, tables.level_values,
                             list(self.rows), list(self.scales))

    @property
    def followers(self) -> IndexArray:
        """The shortest history's followers, ascending (read-only)."""
        return self._arrays[0]

    @property
    def values(self) -> FloatArray:
        """Their logprobs: the dense array's bits (read-only)."""
        return self._arrays[1]

    @functools.cached_property
    def follower_list(self) -> list[int]:
        return self.followers.tolist()  # type: ignore[no-any-return]

    @functools.cached_property
    def value_list(self) -> list[float]:
        return self.values.tolist()  # type: ignore[no-any-return]

    def entry_value(self, level: int, entry: int) -> float:
        """The dense array's value of ``entry`` of ``level`` (0-based), this context's row."""
        value = self.tables.value_lists[level][entry]
        scale = self.scales[level + 1]
        return value + scale if scale != 0.0 else value

    def is_follower(self, token: int) -> bool:
        """Whether ``token`` has a value of its own (else ``log_base[token] + shift``)."""
        if not self.rows:
            return False
        tables, row = self.tables, self.rows[0]
        start, stop = tables.offsets[0][row], tables.offsets[0][row + 1]
        followers = tables.follower_lists[0]
        entry = bisect.bisect_left(followers, token, start, stop)
        return entry < stop and followers[entry] == token

    def value(self, token: int) -> float:
        """The logprob of ``token``: exactly ``dense()[token]`` (from the deepest level whose
        row has it as a follower, found by bisection; no array is built)."""
        tables = self.tables
        value = tables.log_base_list[token] + self.scales[0]
        for level, row in enumerate(self.rows):
            offsets = tables.offsets[level]
            start, stop = offsets[row], offsets[row + 1]
            followers = tables.follower_lists[level]
            entry = bisect.bisect_left(followers, token, start, stop)
            if entry == stop or followers[entry] != token:
                break
            value = self.entry_value(level, entry)
        return value

    def best_others(self, count: int) -> list[tuple[int, float]]:
        """The ``count`` most likely non-followers in ``descending_base`` order, with their
        values, plus every further one whose value ties the last (rounding ``log_base +
        shift`` can make unequal base values equal; ties are broken by id by the caller)."""
        log_base, shift = self.tables.log_base_list, self.shift
        out: list[tuple[int, float]] = []
        last = 0.0
        candidates = self.tables.others(self.rows[0]) if self.rows else self.tables.descending_list
        for token in candidates:
            value = log_base[token] + shift
            if len(out) >= count and value != last:
                return out
            out.append((token, value))
            last = value
        if len(candidates) == len(self.tables.descending_list) - len(self.follower_list):
            return out  # every non-follower was listed
        out, last = [], 0.0  # the row's cached head ran out: walk the whole order
        for token in self.tables.descending_list:
            if self.is_follower(token):
                continue
            value = log_base[token] + shift
            if len(out) >= count and value != last:
                break
            out.append((token, value))
            last = value
        return out

    def top(self, k: int) -> list[tuple[int, float]]:
        """The ``k`` most likely ``(token, logprob)``, most likely first, ties by lowest id:
        what ``sampling.top_logprobs(dense(), k)`` gives (every value here is finite).

        Each token's value comes from one place: the deepest level whose row it follows, or
        the base. Each level's row, in its value order (``SparseTables.row_order``), less the
        entries a deeper level overrides, gives its ``k`` best and their ties; the base its
        ``best_others``; the ``k`` best of all those are the answer. No array is built.
        """
        if k <= 0:
            return []
        key = ("top", k)
        found = self.memo.get(key)
        if found is not None:
            return found  # type: ignore[return-value]
        tables, rows, scales = self.tables, self.rows, self.scales
        candidates = self.best_others(k)
        covered: set[int] = set()  # level-1 entries a deeper level gives the value of
        for level in range(len(rows) - 1, -1, -1):
            to_first = tables.to_first[level] if level else None
            values, followers = tables.value_lists[level], tables.follower_lists[level]
            scale = scales[level + 1]
            taken, last = 0, 0.0
            for entry in tables.row_order(level, rows[level]):
                if (entry if to_first is None else to_first[entry]) in covered:
                    continue
                value = values[entry] + scale if scale != 0.0 else values[entry]
                if taken >= k and value != last:
                    break
                candidates.append((followers[entry], value))
                taken, last = taken + 1, value
            if to_first is not None:
                offsets = tables.offsets[level]
                covered.update(to_first[offsets[rows[level]] : offsets[rows[level] + 1]])
        candidates.sort(key=_descending_value)
        result = candidates[:k]
        self.memo[key] = result
        return result


def _descending_value(pair: tuple[int, float]) -> tuple[float, int]:
    return -pair[1], pair[0]


def sparse_values(
    offsets: Sequence[Sequence[int]],
    followers: list[IndexArray],
    level_values: list[FloatArray],
    rows: list[int],
    scales: list[float],
) -> tuple[IndexArray, FloatArray]:
    """The followers of ``rows[0]``'s history and their values, built as ``_assemble`` builds
    the dense array (level by level, each level's values plus its scale when it is not 0),
    restricted to those followers: the same operations on the same floats, the same bits."""
    start, stop = offsets[0][rows[0]], offsets[0][rows[0] + 1]
    ids = followers[0][start:stop]
    values = level_values[0][start:stop]
    if scales[1] != 0.0:
        values = np.add(values, scales[1])
    else:
        values = values.copy()
    for level in range(1, len(rows)):
        row = rows[level]
        start, stop = offsets[level][row], offsets[level][row + 1]
        deeper = level_values[level][start:stop]
        if scales[level + 1] != 0.0:
            deeper = np.add(deeper, scales[level + 1])
        values[ids.searchsorted(followers[level][start:stop])] = deeper
    ids.flags.writeable = False
    values.flags.writeable = False
    return ids, values
