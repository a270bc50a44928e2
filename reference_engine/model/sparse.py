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
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IdArray = npt.NDArray[np.intp]


class SparseTables:
    """What every context's sparse view shares: the base logprobs and their order, as lists
    (Python floats are IEEE doubles: ``log_base[w] + shift`` is the same add as NumPy's)."""

    def __init__(self, log_base: FloatArray, descending_base: IdArray) -> None:
        self.log_base = log_base
        self.log_base_list: list[float] = log_base.tolist()
        self.descending_list: list[int] = descending_base.tolist()
        self.vocab_size = int(log_base.shape[0])


@dataclass(frozen=True, eq=False)
class SparseLogprobs:
    """One context's logprobs: ``values`` at ``followers``, ``log_base + shift`` elsewhere.

    ``memo`` holds what samplers derive from the view (per temperature, say), so a context
    seen again costs a lookup; the view lives in the model's bounded cache, and so does it.
    """

    followers: IdArray  # ascending, read-only
    values: FloatArray  # read-only, the dense array's bits at ``followers``
    shift: float
    tables: SparseTables
    dense: Callable[[], FloatArray]  # the model's dense array for this context (cached there)
    follower_list: list[int] = field(init=False, repr=False)
    value_list: list[float] = field(init=False, repr=False)
    memo: dict[object, object] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "follower_list", self.followers.tolist())
        object.__setattr__(self, "value_list", self.values.tolist())
        object.__setattr__(self, "memo", {})

    def is_follower(self, token: int) -> bool:
        """Whether ``token`` has a value of its own (else ``log_base[token] + shift``)."""
        followers = self.follower_list
        position = bisect.bisect_left(followers, token)
        return position < len(followers) and followers[position] == token

    def value(self, token: int) -> float:
        """The logprob of ``token``: exactly ``dense()[token]``."""
        followers = self.follower_list
        position = bisect.bisect_left(followers, token)
        if position < len(followers) and followers[position] == token:
            return self.value_list[position]
        return self.tables.log_base_list[token] + self.shift

    def best_others(self, count: int) -> list[tuple[int, float]]:
        """The ``count`` most likely non-followers in ``descending_base`` order, with their
        values, plus every further one whose value ties the last (rounding ``log_base +
        shift`` can make unequal base values equal; ties are broken by id by the caller)."""
        log_base, shift = self.tables.log_base_list, self.shift
        is_follower = self.is_follower
        out: list[tuple[int, float]] = []
        last = 0.0
        for token in self.tables.descending_list:
            if is_follower(token):
                continue
            value = log_base[token] + shift
            if len(out) >= count and value != last:
                break
            out.append((token, value))
            last = value
        return out

    def top(self, k: int) -> list[tuple[int, float]]:
        """The ``k`` most likely ``(token, logprob)``, most likely first, ties by lowest id:
        what ``sampling.top_logprobs(dense(), k)`` gives (every value here is finite)."""
        if k <= 0:
            return []
        key = ("top", k)
        found = self.memo.get(key)
        if found is not None:
            return found  # type: ignore[return-value]
        values = self.values
        size = values.shape[0]
        if size <= k:
            candidates = list(zip(self.follower_list, self.value_list, strict=True))
        else:  # every follower that can be among the k best: >= the k-th largest value
            kth = values[values.argmax()] if k == 1 else np.partition(values, size - k)[size - k]
            followers, value_list = self.follower_list, self.value_list
            candidates = [(followers[i], value_list[i]) for i in (values >= kth).nonzero()[0]]
        candidates.extend(self.best_others(k))
        candidates.sort(key=_descending_value)
        result = candidates[:k]
        self.memo[key] = result
        return result


def _descending_value(pair: tuple[int, float]) -> tuple[float, int]:
    return -pair[1], pair[0]


def sparse_values(
    offsets: list[list[int]],
    followers: list[IdArray],
    level_values: list[FloatArray],
    rows: list[int],
    scales: list[float],
) -> tuple[IdArray, FloatArray]:
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
