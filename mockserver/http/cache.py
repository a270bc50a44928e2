"""Memoised engine results for deterministic requests.

The engine is a pure function of its request when sampling is greedy (temperature 0) or
seeded: "The same artifact version, request and seed give the same output in any process"
(reference_engine); ``Engine.deterministic`` says which requests are such. The mock therefore
keeps the results of such requests -- the whole
:class:`Completion`, or a finished stream's events -- in a bounded LRU, and answers a repeat
without running the engine. Answers are identical either way; only the time differs. The key
is the request body as handed to the engine (after ``body`` faults) in canonical JSON, plus
the wire, so a hit skips the conversion to a :class:`GenerationRequest` too. Unseeded
sampling is never cached; ``--cache-entries 0`` turns the cache off.

On top of that, a non-streamed deterministic answer is kept *rendered* (an :class:`Answer`),
keyed by the served contract's name and the exact body bytes, for requests that no fault, chaos or
rate limit can touch: a repeat of the same bytes then skips parsing, validation and rendering
too. The rendered body is kept without its identity (``id``, ``created``), which is drawn
fresh for every answer, so the bytes are those of the full path but for those two fields.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from reference_engine.results import Choice, Completion, Event, LogprobEntry, UsageEvent
from spec import JSON

from ..wire import Wire

MAX_EVENTS_PER_ENTRY = 4096
"""Longer streams are not kept: a few huge entries must not crowd out many small ones."""
MAX_ENTRY_UNITS = 256 * 1024
"""Nor results larger than this in :func:`choice_units` (about bytes): the LRU is sized in
entries, and 4096 echo-scoring results of 29 MB each would be no cache but a leak."""

MAX_ANSWER_BODY_BYTES = 64 * 1024
"""Longer request bodies are not kept as answer keys (nor answers over 256 KiB)."""
MAX_ANSWER_BYTES = 256 * 1024

CacheKey = tuple[str, str]
"""A result's key: the wire and the body as handed to the engine, in canonical JSON."""
AnswerKey = tuple[str, bytes]
"""A rendered answer's key: the served contract's name and the request body's bytes."""


@dataclass(frozen=True)
class Answer:
    """A rendered non-streamed answer, minus its identity prefix (see ``identity_prefix``)."""

    tail: bytes
    completion_tokens: int


class ResultCache:
    """An LRU of engine results, ``entries`` long."""

    def __init__(self, entries: int) -> None:
        self.entries = entries
        self._items: OrderedDict[tuple[str, CacheKey], Completion | tuple[Event, ...]] = (
            OrderedDict()
        )
        self._answers: OrderedDict[AnswerKey, Answer] = OrderedDict()
        self.hits = 0

    def key(self, wire: Wire, params: Mapping[str, JSON], *,
            deterministic: bool) -> CacheKey | None:
        """The key of a request body the engine calls ``deterministic``, or None (not
        cacheable)."""
        if self.entries <= 0 or not deterministic:
            return None
        return wire, json.dumps(params, sort_keys=True, separators=(",", ":"))

    def answer_key(self, contract: str, raw: bytes) -> AnswerKey | None:
        """The key of a rendered answer for these body bytes, or None (not kept)."""
        if self.entries <= 0 or len(raw) > MAX_ANSWER_BODY_BYTES:
            return None
        return contract, raw

    def answer(self, key: AnswerKey | None) -> Answer | None:
        if key is None:
            return None
        value = self._answers.get(key)
        if value is not None:
            self._answers.move_to_end(key)
            self.hits += 1
        return value

    def keep_answer(self, key: AnswerKey | None, answer: Answer) -> None:
        if key is None or len(answer.tail) > MAX_ANSWER_BYTES:
            return
        self._answers[key] = answer
        self._answers.move_to_end(key)
        while len(self._answers) > self.entries:
            self._answers.popitem(last=False)

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

    def has_completion(self, key: CacheKey | None) -> bool:
        """Whether ``completion(key)`` would hit (without counting a hit)."""
        return key is not None and ("complete", key) in self._items

    def completion(self, key: CacheKey | None) -> Completion | None:
        value = self._get("complete", key)
        return value if isinstance(value, Completion) else None

    def keep_completion(self, key: CacheKey | None, completion: Completion) -> None:
        """Keep ``completion`` unless it is larger than :data:`MAX_ENTRY_UNITS`."""
        if key is not None and completion_units(completion) <= MAX_ENTRY_UNITS:
            self._put("complete", key, completion)

    def events(self, key: CacheKey | None) -> tuple[Event, ...] | None:
        value = self._get("stream", key)
        return value if isinstance(value, tuple) else None

    def recording(self, key: CacheKey | None, events: Iterator[Event]) -> Iterator[Event]:
        """Pass ``events`` through; keep them if the stream runs to its end."""
        if key is None:
            yield from events
            return
        seen: list[Event] | None = []
        size = 0
        for event in events:
            if seen is not None:
                size += event_units(event)
                seen = seen if len(seen) < MAX_EVENTS_PER_ENTRY and size <= MAX_ENTRY_UNITS \
                    else None
            if seen is not None:
                seen.append(event)
            yield event
            if isinstance(event, UsageEvent) and seen is not None:
                self._put("stream", key, tuple(seen))


def choice_units(choice: Choice) -> int:
    """About the bytes a choice holds: its text, and per logprob entry its token, number
    and top alternatives (what makes echo scoring results huge)."""
    return len(choice.text) + _logprob_units(choice.logprobs or ())


def completion_units(completion: Completion) -> int:
    return sum(choice_units(choice) for choice in completion.choices)


def event_units(event: Event) -> int:
    """:func:`choice_units` for one stream event."""
    if isinstance(event, UsageEvent):
        return 0
    entries = event.logprobs  # mostly empty: once per streamed token, skip the sum then
    return len(event.text) + (_logprob_units(entries) if entries else 0)


def _logprob_units(entries: tuple[LogprobEntry, ...]) -> int:
    return sum(48 + len(entry.token) + 40 * len(entry.top or ()) for entry in entries)
