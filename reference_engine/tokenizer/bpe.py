"""Applying learned byte-pair merges to one pre-token.

Merges are given as a mapping from an adjacent token pair to the id of the token it merges into;
ids grow with merge order, so a smaller id means an earlier, higher-priority merge. Standard BPE
semantics: repeatedly merge the highest-priority pair present, all its occurrences left to right.

Two implementations with identical results: a simple rescanning loop that is fastest for the short
pieces that dominate real text, and a heap over a linked list, O(n log n), for long pieces (a long
whitespace run or a huge word in a prompt must not cost O(n^2)). A test checks they agree.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Mapping

Pair = tuple[int, int]
"""Two adjacent token ids a merge joins (the trainer counts them, the tokenizer applies them)."""
# Pieces longer than this (in bytes) use the heap implementation.
LONG_PIECE = 64


def merge_simple(ids: list[int], ranks: Mapping[Pair, int]) -> list[int]:
    """Apply merges by rescanning the sequence once per merge step (quadratic, small constant)."""
    while len(ids) > 1:
        best_id = -1
        best: Pair | None = None
        for pair in itertools.pairwise(ids):
            merged = ranks.get(pair)
            if merged is not None and (best is None or merged < best_id):
                best_id, best = merged, pair
        if best is None:
            break
        ids = replace_pair(ids, best, best_id)
    return ids


def replace_pair(ids: list[int], pair: Pair, new_id: int) -> list[int]:
    """``ids`` with every non-overlapping occurrence of ``pair``, left to right, as ``new_id``.

    The one merge step both encoding and training apply.
    """
    first, second = pair
    out: list[int] = []
    i, n = 0, len(ids)
    while i < n:
        if i + 1 < n and ids[i] == first and ids[i + 1] == second:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def merge_heap(ids: list[int], ranks: Mapping[Pair, int]) -> list[int]:
    """Apply merges with a priority queue of (merged id, position) over a doubly linked list.

    Stale queue entries are skipped by checking that the pair now at that position still merges
    into the same id. A new pair created by a merge always merges into a larger id than the one
    just applied, so processing equal ids by position reproduces the left-to-right pass.
    """
    n = len(ids)
    if n < 2:
        return list(ids)
    values = list(ids)
    prev = list(range(-1, n - 1))
    nxt = list(range(1, n + 1))
    nxt[-1] = -1
    alive = [True] * n
    heap: list[tuple[int, int]] = []
    for i in range(n - 1):
        merged = ranks.get((values[i], values[i + 1]))
        if merged is not None:
            heap.append((merged, i))
    heapq.heapify(heap)
    while heap:
        merged, pos = heapq.heappop(heap)
        if not alive[pos]:
            continue
        right = nxt[pos]
        if right < 0 or ranks.get((values[pos], values[right])) != merged:
            continue
        values[pos] = merged
        alive[right] = False
        after = nxt[right]
        nxt[pos] = after
        if after >= 0:
            prev[after] = pos
            candidate = ranks.get((merged, values[after]))
            if candidate is not None:
                heapq.heappush(heap, (candidate, pos))
        before = prev[pos]
        if before >= 0:
            candidate = ranks.get((values[before], merged))
            if candidate is not None:
                heapq.heappush(heap, (candidate, before))
    out: list[int] = []
    pos = 0
    while pos >= 0:
        out.append(values[pos])
        pos = nxt[pos]
    return out


def merge(data: bytes, ranks: Mapping[Pair, int]) -> tuple[int, ...]:
    """Tokenize one pre-token's UTF-8 bytes into token ids."""
    ids = list(data)
    if len(ids) > LONG_PIECE:
        return tuple(merge_heap(ids, ranks))
    return tuple(merge_simple(ids, ranks))
