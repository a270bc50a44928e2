"""A small thread-safe LRU cache for the model's per-context distributions.

The mock serves concurrent requests from threads, and generation asks for the same contexts over
and over (greedy decoding, shared prompts), so a bounded cache pays off. A lock guards the
``OrderedDict``; values are computed outside the lock (two threads may compute the same entry
once each, which is harmless because results are deterministic and read-only).
"""

from __future__ import annotations

import threading
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
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """Return the cached value and mark it recently used, or None."""
        with self._lock:
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> V:
        """Store a value (keeping an existing one for the key) and return the stored value."""
        if self._maxsize == 0:
            return value
        with self._lock:
            existing = self._data.get(key)
            if existing is not None:
                self._data.move_to_end(key)
                return existing
            self._data[key] = value
            if len(self._data) > self._maxsize:
                self._data.popitem(last=False)
            return value

    def __len__(self) -> int:
        """Number of cached entries."""
        with self._lock:
            return len(self._data)
