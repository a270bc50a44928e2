"""A small thread-safe LRU cache for the model's per-context distributions.

The mock serves concurrent requests from threads, and generation asks for the same contexts over
and over (greedy decoding, shared prompts), so a bounded cache pays off. It is on the path of
every sampled token, so it takes no lock: each step below is one ``OrderedDict`` method, which
CPython runs atomically (the keys are tuples of ints, hashed and compared in C), and every
interleaving of two threads leaves a valid cache. At worst two threads compute the same entry
once each (harmless: results are deterministic and read-only; the first one stored is kept) or
an eviction races a lookup (the lookup then misses). The lock this replaces cost about a
microsecond per sampled token.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRUCache(Generic[K, V]):
    """Bounded mapping that evicts the least recently used entry."""

    def __init__(self, maxsize: int) -> None:
        """Create an empty cache holding at most ``maxsize`` entries (0 disables caching)."""
        if maxsize < 0:
            raise ValueError("maxsize must be >= 0")
        self._maxsize = maxsize
        self._data: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        """Return the cached value and mark it recently used, or None."""
        data = self._data
        value = data.get(key)
        if value is not None:
            try:
                data.move_to_end(key)
            except KeyError:  # evicted by another thread in between: still a valid value
                pass
        return value

    def put(self, key: K, value: V) -> V:
        """Store a value (keeping an existing one for the key) and return the stored value."""
        if self._maxsize == 0:
            return value
        data = self._data
        stored = data.setdefault(key, value)
        if stored is not value:
            try:
                data.move_to_end(key)
            except KeyError:
                pass
            return stored
        while len(data) > self._maxsize:
            try:
                data.popitem(last=False)
            except KeyError:  # another thread emptied it meanwhile
                break
        return value

    def __len__(self) -> int:
        """Number of cached entries."""
        return len(self._data)
