"""Records produced by the SSE parser: dispatched events, comments and observations.

Field semantics follow the WHATWG event-stream interpretation
(https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation):
"If the data buffer is an empty string, set the data buffer and the event type buffer to the
empty string and return. [...] If the data buffer's last character is a U+000A LINE FEED (LF)
character, then remove the last character from the data buffer."
"""

from __future__ import annotations

from dataclasses import dataclass

RAW_EXCERPT_BYTES = 512
"""Observations keep at most this many bytes of the offending line."""


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched event.

    ``event`` is the event type buffer, ``None`` when it is empty (browsers then use
    ``"message"``). ``id`` is the *last event ID buffer* at dispatch time, which per WHATWG
    persists across events until another ``id`` field changes it; ``None`` when it is empty.
    ``retry`` is the last valid ``retry`` value given inside this event's block, else ``None``.
    ``raw`` holds the exact bytes of the event's lines, from its first field line through the
    terminating blank line, line ends included (comment lines inside the block included).
    ``offset`` is the stream byte offset of ``raw[0]``; times are the caller's clock values for
    the arrival of the event's first byte and of the blank line that dispatched it.
    """

    data: str
    event: str | None
    id: str | None
    retry: int | None
    raw: bytes
    offset: int
    first_byte_at: float
    dispatched_at: float


@dataclass(frozen=True, slots=True)
class Comment:
    """A line starting with ``:``; ``text`` is everything after the colon, undecoded spaces kept."""

    text: str
    offset: int
    at: float


@dataclass(frozen=True, slots=True)
class Observation:
    """A deviation from the event-stream format, for the rules to judge.

    ``code`` is one of :mod:`conformance.sse.codes`; ``offset`` the stream byte offset it refers
    to; ``raw`` the offending line's bytes, cut to :data:`RAW_EXCERPT_BYTES`.
    """

    code: str
    message: str
    offset: int
    raw: bytes


def is_done_sentinel(event: SSEEvent) -> bool:
    """True for the OpenAI-style end-of-stream marker event ``data: [DONE]``."""
    return event.data == "[DONE]"
