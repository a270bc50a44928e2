"""Memoised engine results for deterministic requests.

The engine is a pure function of its request when sampling is greedy (temperature 0) or
seeded: "The same artifact version, request and seed give the same output in any process"
(reference_engine). The mock therefore keeps the results of such requests -- the whole
:class:`Completion`, or a finished stream's events -- in a bounded LRU, and answers a repeat
without running the engine. Answers are identical either way; only the time differs. The key
is the request body as handed to the engine (after ``body`` faults) in canonical JSON, plus
the wire profile, so a hit skips the conversion to a :class:`GenerationRequest` too. Unseeded
sampling is never cached; ``--cache-entries 0`` turns the cache off.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterator, Mapping

from reference_engine.results import Completion, Event, UsageEvent
from spec import JSON

MAX_EVENTS_PER_ENTRY = 4096
"""Longer streams are not kept: a few huge entries must not crowd out many small ones."""

CacheKey = tuple[str, str]


class ResultCache:
    """An LRU of engine results, ``entries`` long."""

    def __init__(self, entries: int) -> None:
        self.entries = entries
        self._items: OrderedDict[tuple[str, CacheKey], Completion | tuple[Event, ...]] = (
            OrderedDict()
        )
        self.hits = 0

    def key(self, profile: str, params: Mapping[str, JSON]) -> CacheKey | None:
        """The key of a deterministic request body, or None (not cacheable)."""
        if self.entries <= 0:
            return None
        if params.get("temperature") != 0 and params.get("seed") is None:
            return None
        return profile, json.dumps(params, sort_keys=True, separators=(",", ":"))

    def _get(self, kind: str, key: CacheKey | None) -> Completion | tuple[Event, ...] | None:
        if key is None:
            return None
        value = self._items.get((kind, key))
        if value is not None:
            self._items.move_to_end((kind, key))
            self.hits += 1
        return value

    def _put(self, kind: str, key: CacheKey, value: Completion | tuple[Event, ...]) -> None:
        self._items[(kind, key)] = value
        self._items.move_to_end((kind, key))
        while len(self._items) > self.entries:
            self._items.popitem(last=False)

    def completion(self, key: CacheKey | None) -> Completion | None:
        value = self._get("complete", key)
        return value if isinstance(value, Completion) else None

    def keep_completion(self, key: CacheKey | None, completion: Completion) -> None:
        if key is not None:
            self._put("complete", key, completion)

    def events(self, key: CacheKey | None) -> tuple[Event, ...] | None:
        value = self._get("stream", key)
        return value if isinstance(value, tuple) else None

    def recording(self, key: CacheKey | None, events: Iterator[Event]) -> Iterator[Event]:
        """Pass ``events`` through; keep them if the stream runs to its end."""
        if key is None:
            yield from events
            return
        seen: list[Event] = []
        for event in events:
            if len(seen) <= MAX_EVENTS_PER_ENTRY:
                seen.append(event)
            yield event
            if isinstance(event, UsageEvent) and len(seen) <= MAX_EVENTS_PER_ENTRY:
                self._put("stream", key, tuple(seen))
