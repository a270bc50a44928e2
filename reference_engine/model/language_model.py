"""The reference language model: next-token distributions from an interpolated KN n-gram model.

``logprobs(context)`` returns a dense float64 vector over the whole vocabulary. With the chain of
histories ``h1 ⊂ h2 ⊂ ... ⊂ hk`` (the longest suffixes of the context that training saw) the
interpolated probability of a token ``w`` is

* ``P_k(w | hk)`` if ``w`` followed ``hk`` (precomputed at load),
* ``gamma(hk) * P_{k-1}(w | h_{k-1})`` if it first follows at level ``k-1``, and so on,
* ``gamma(hk) * ... * gamma(h1) * base(w)`` otherwise.

So a query starts from the precomputed ``log base`` plus one scalar and overwrites the followers
of each level in turn (followers nest, see ``kneser_ney``): a dense add and a few small scatters,
no logarithms, no reductions. All arithmetic is IEEE ``+``/``*`` on values computed at load,
so results are bit-identical across runs, processes and machines.

Returned arrays are read-only and cached per history chain (bounded, thread-safe LRU). The model
holds no other mutable state, so one instance serves concurrent requests.

Structure that samplers can use (``descending_base``): every token that is not a follower of the
context's shortest seen history (the longer histories' followers are among its followers) gets
``log base(w)`` plus one scalar, so those tokens are ordered by probability as the base
distribution orders them, whatever the context.

Note for callers: training saw every document preceded by ``<|endoftext|>``; a prompt that starts
a document is best conditioned with ``eot_id`` in front (as GPT-2 does).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from .cache import LRUCache
from .kneser_ney import ModelTables
from .sparse import SparseLogprobs, SparseTables, frozen

# Per kind; one entry is vocab_size * 8 bytes (32 KiB for 4k). Sampled generation rarely hits
# (a new context almost every step), and every retained array makes a new one land in colder
# memory: 512 entries cost the default-sampling loop ~10% against 128, which still holds the
# cycles greedy decoding falls into.
DEFAULT_CACHE_SIZE = 128
# Sparse views hold a few hundred floats at most (and the sampler's tables built from them),
# so many more fit: enough for the contexts a mock sees again and again.
SPARSE_CACHE_SIZE = 4096

Chain = tuple[int, int]  # (history length, packed history)


class LanguageModel:
    """Next-token distributions of an order-``order`` interpolated modified-KN model."""

    vocab_size: int
    order: int
    version: str

    def __init__(
        self, tables: ModelTables, version: str, cache_size: int = DEFAULT_CACHE_SIZE
    ) -> None:
        """Wrap estimated tables; ``version`` identifies the artifacts they came from."""
        self.vocab_size = tables.vocab_size
        self.order = tables.order
        self.version = version
        self._tables = tables
        vocab = tables.vocab_size
        levels = tables.levels
        first = levels[0]
        row_of_token = [-1] * vocab
        for row, key in enumerate(first.keys.tolist()):
            row_of_token[key] = row
        self._row_of_token = tuple(row_of_token)  # tuples: see ``sparse.frozen``
        # Dicts keyed by packed int histories (int hashing is not randomized per process).
        # Level 1 uses the list above; the empty dict keeps indices aligned with history length.
        self._rows: list[dict[int, int]] = [
            dict(zip(level.keys.tolist(), range(level.keys.size), strict=True)) if n else {}
            for n, level in enumerate(levels)
        ]
        self._offsets = [frozen(level.offsets) for level in levels]
        self._gamma = [frozen(level.gamma) for level in levels]
        self._log_gamma = [frozen(level.log_gamma) for level in levels]
        self._followers = [level.followers for level in levels]
        self._probs = [level.probs for level in levels]
        self._level_logprobs = [level.logprobs for level in levels]
        self._logprob_cache: LRUCache[Chain, np.ndarray] = LRUCache(cache_size)
        self._prob_cache: LRUCache[Chain, np.ndarray] = LRUCache(cache_size)
        self._sparse_cache: LRUCache[Chain, SparseLogprobs] = LRUCache(
            SPARSE_CACHE_SIZE if cache_size else 0
        )
        self._empty: SparseLogprobs | None = None

    @property
    def tables(self) -> ModelTables:
        """The estimated tables (read-only arrays)."""
        return self._tables

    def _token(self, value: int) -> int:
        token = operator.index(value)
        if not 0 <= token < self.vocab_size:
            raise ValueError(f"token id {token} out of range (vocab_size {self.vocab_size})")
        return token

    def _chain(self, context: Sequence[int]) -> tuple[Chain, list[int]]:
        """The longest seen history suffix (as a cache key) and its row at each level.

        On the path of every sampled token: a plain int id in range is taken as is (the
        check inline), anything else goes through ``_token``."""
        n = len(context)
        if n == 0:
            return (0, 0), []
        vocab = self.vocab_size
        key = context[-1]
        if type(key) is not int or not 0 <= key < vocab:
            key = self._token(key)
        row = self._row_of_token[key]
        if row < 0:
            return (0, 0), []
        rows = [row]
        scale = vocab
        levels = self._rows
        for length in range(2, min(self.order - 1, n) + 1):
            token = context[-length]
            if type(token) is not int or not 0 <= token < vocab:
                token = self._token(token)
            packed = token * scale + key
            found = levels[length - 1].get(packed)
            if found is None:
                break
            rows.append(found)
            key = packed
            scale *= vocab
        return (len(rows), key), rows

    def _assemble(self, rows: list[int], base: np.ndarray, level_values: list[np.ndarray],
                  weights: list[tuple[float, ...]], combine: Any, combine_scalar: Any,
                  identity: float) -> np.ndarray:
        """The interpolated distribution for a context's rows, in log space (``np.add`` of
        backoff log-weights) or in probability space (``np.multiply`` of backoff weights):
        the base scaled by every level's backoff weight, each level's followers overwritten
        by their own values scaled by the weights of the levels above. The same operations in
        the same order in both spaces, so each result is bit-reproducible."""
        depth = len(rows)
        scales = [identity] * (depth + 1)
        for level in range(depth, 0, -1):
            scales[level - 1] = combine_scalar(scales[level], weights[level - 1][rows[level - 1]])
        out = combine(base, scales[0])
        for level in range(depth):
            row = rows[level]
            offsets = self._offsets[level]
            start, stop = offsets[row], offsets[row + 1]
            values = level_values[level][start:stop]
            scale = scales[level + 1]
            if scale != identity:
                values = combine(values, scale)
            out[self._followers[level][start:stop]] = values
        out.flags.writeable = False
        return out  # type: ignore[no-any-return]

    def logprobs(self, context: Sequence[int]) -> np.ndarray:
        """Natural-log next-token probabilities, shape ``(vocab_size,)``, read-only, cached.

        Only the last ``order - 1`` tokens of ``context`` matter; raises ValueError for an
        out-of-range id among them.
        """
        chain, rows = self._chain(context)
        if not rows:
            return self._tables.log_base
        cached = self._logprob_cache.get(chain)
        if cached is not None:
            return cached
        out = self._assemble(rows, self._tables.log_base, self._level_logprobs, self._log_gamma,
                             np.add, operator.add, 0.0)
        return self._logprob_cache.put(chain, out)

    def sparse_logprobs(self, context: Sequence[int]) -> SparseLogprobs:
        """``logprobs(context)`` as followers, their values and one shift (see ``sparse``):
        the same bits, without the dense array; cached per history chain."""
        chain, rows = self._chain(context)
        if not rows:
            if self._empty is None:
                self._empty = self._sparse(chain, rows, context)
            return self._empty
        cached = self._sparse_cache.get(chain)
        if cached is not None:
            return cached
        return self._sparse_cache.put(chain, self._sparse(chain, rows, context))

    def _sparse(self, chain: Chain, rows: list[int], context: Sequence[int]) -> SparseLogprobs:
        log_gamma = self._log_gamma
        scales = [0.0] * (len(rows) + 1)
        for level in range(len(rows), 0, -1):  # as ``_assemble`` computes them
            scales[level - 1] = scales[level] + log_gamma[level - 1][rows[level - 1]]
        frozen = tuple(context[len(context) - chain[0]:]) if chain[0] else ()
        return SparseLogprobs(
            rows=tuple(rows),
            scales=tuple(scales),
            tables=self.sparse_tables,
            dense=functools.partial(self.logprobs, frozen),
        )

    @functools.cached_property
    def sparse_tables(self) -> SparseTables:
        """The tables every sparse view shares (built on first use)."""
        return SparseTables(self._tables.log_base, self.descending_base, self._tables.levels)

    def probs(self, context: Sequence[int]) -> np.ndarray:
        """Next-token probabilities, computed like ``logprobs`` (not by exponentiating it).

        The two agree to within a few ulp; each is bit-reproducible on its own.
        """
        chain, rows = self._chain(context)
        if not rows:
            return self._tables.base
        cached = self._prob_cache.get(chain)
        if cached is not None:
            return cached
        out = self._assemble(rows, self._tables.base, self._probs, self._gamma,
                             np.multiply, operator.mul, 1.0)
        return self._prob_cache.put(chain, out)

    @functools.cached_property
    def descending_base(self) -> np.ndarray:
        """Every token id, by descending base probability (ties: lowest id first), read-only.

        ``logprobs(context)`` is non-increasing along it except at the context's followers.
        """
        order = np.argsort(-self._tables.log_base, kind="stable")
        order.flags.writeable = False
        return order

    def history(self, context: Sequence[int]) -> tuple[int, ...]:
        """The suffix of ``context`` that determines the distribution (longest seen history)."""
        (depth, _), _ = self._chain(context)
        return tuple(operator.index(t) for t in context[len(context) - depth :]) if depth else ()
