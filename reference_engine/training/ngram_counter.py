"""Counting the n-grams of the tokenized corpus into the tables the model is estimated from.

The token stream is ``<|endoftext|> doc1 <|endoftext|> doc2 ... <|endoftext|>``: the separator
both ends a document (so the model learns when to stop) and starts the next (so it learns how
documents begin). The top level stores raw counts of every ``order``-gram; the lower levels store
Kneser-Ney continuation counts, the number of distinct tokens seen just before an n-gram. The
n-gram at the very start of the stream has no left neighbour and counts one "start" neighbour,
which keeps the levels nested (every follower of a history also follows its suffix one level
down), a property the model relies on.

Everything is vectorized with ``numpy.unique`` over int64 keys, which sorts, so the tables come
out ordered and deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from reference_engine.model.storage import CountLevel, NgramCounts, validate


def token_stream(documents: Sequence[Sequence[int]], eot_id: int) -> np.ndarray:
    """Concatenate tokenized documents with ``eot_id`` before, between and after them."""
    parts: list[np.ndarray] = [np.array([eot_id], dtype=np.int64)]
    for document in documents:
        parts.append(np.asarray(document, dtype=np.int64))
        parts.append(np.array([eot_id], dtype=np.int64))
    return np.concatenate(parts)


def _window_keys(stream: np.ndarray, length: int, vocab_size: int) -> np.ndarray:
    """Packed key of every window of ``length`` tokens, first token most significant."""
    count = stream.size - length + 1
    keys = np.zeros(max(count, 0), dtype=np.int64)
    for offset in range(length):
        keys = keys * vocab_size + stream[offset : offset + count]
    return keys


def _level(grams: np.ndarray, counts: np.ndarray, history: int, vocab_size: int) -> CountLevel:
    """Split sorted unique packed ``history + 1``-grams into a CSR table by history."""
    histories = grams // vocab_size
    followers = grams % vocab_size
    unique_histories, starts = np.unique(histories, return_index=True)
    contexts = np.zeros((unique_histories.size, history), dtype=np.int64)
    rest = unique_histories.copy()
    for column in range(history - 1, -1, -1):
        contexts[:, column] = rest % vocab_size
        rest //= vocab_size
    offsets = np.append(starts, grams.size).astype(np.int64)
    return CountLevel(contexts=contexts, offsets=offsets, followers=followers, counts=counts)


def count_ngrams(stream: np.ndarray, order: int, vocab_size: int) -> NgramCounts:
    """Build the raw top-level counts and the continuation counts below it."""
    if order < 2:
        raise ValueError("order must be >= 2")
    if vocab_size**order * (vocab_size + 1) >= 2**63:
        raise ValueError("vocab_size ** order is too large for int64 keys")
    stream = np.asarray(stream, dtype=np.int64)
    if stream.size < order:
        raise ValueError("token stream is shorter than the model order")
    levels: list[CountLevel] = []
    unigram = np.zeros(vocab_size, dtype=np.int64)
    for length in range(1, order + 1):
        keys = _window_keys(stream, length, vocab_size)
        if length == order:
            grams, counts = np.unique(keys, return_counts=True)
        else:
            # Distinct (n-gram, left neighbour) pairs; ``vocab_size`` stands for "stream start".
            left = np.concatenate(([vocab_size], stream[: keys.size - 1]))
            pairs = np.unique(keys * (vocab_size + 1) + left)
            grams, counts = np.unique(pairs // (vocab_size + 1), return_counts=True)
        counts = counts.astype(np.int64)
        if length == 1:
            unigram[grams] = counts
        else:
            levels.append(_level(grams, counts, length - 1, vocab_size))
    result = NgramCounts(order=order, vocab_size=vocab_size, unigram=unigram, levels=tuple(levels))
    validate(result)
    return result
