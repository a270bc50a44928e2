"""``text/event-stream`` for schemathesis, read by the harness's strict SSE parser.

Spec: ``CompletionEventStream`` in ``spec/completions.yaml``: "The decoded ``data`` payloads of
a completion stream, in order": JSON chunks, then the string ``[DONE]``. Schemathesis 4 reads an
event-stream schema the OpenAPI 3.2 way, as the schema of *each* item a deserializer returns;
:func:`event_stream` returns the whole decoded stream as its only item, so
``response_schema_conformance`` validates the stream, in order, against the contract's schema.

The same parse feeds the harness's rules (:mod:`conformance.fuzz.exchange`): one parser, so
schemathesis and the SSE rules never disagree about where an event starts or ends.
"""

from __future__ import annotations

from dataclasses import dataclass

import schemathesis

from conformance.sse import Comment, Observation, SSEEvent, SSEParser
from conformance.views import DONE
from conformance.wire_json import parse_json
from spec import JSON

from .bounded import Arrivals, arrivals_of
from .memo import remembered

MEDIA_TYPE = "text/event-stream"


@dataclass(frozen=True)
class ParsedStream:
    """Everything the SSE parser saw in one body."""

    events: tuple[SSEEvent, ...]
    observations: tuple[Observation, ...]
    comments: tuple[Comment, ...]
    observation_counts: dict[str, int]
    halted: str | None


def parse_stream(content: bytes, *, max_line_bytes: int | None = None,
                 max_event_bytes: int | None = None, arrivals: Arrivals = ()) -> ParsedStream:
    """Parse a complete event-stream body (the end of ``content`` is the end of the stream).

    ``arrivals`` (:func:`~conformance.fuzz.bounded.arrivals_of`) say when each part of
    ``content`` arrived, so each event carries its arrival times as in a run; without them
    every event arrived at 0."""
    limits = {
        key: value
        for key, value in (("max_line_bytes", max_line_bytes), ("max_event_bytes", max_event_bytes))
        if value is not None
    }
    parser = SSEParser(**limits)  # type: ignore[arg-type]
    events: list[SSEEvent] = []
    start, now = 0, 0.0
    for end, now in arrivals:
        if end > len(content):
            break
        if end > start:
            events += parser.feed(content[start:end], now)
            start = end
    events += parser.feed(content[start:], now)
    parser.close(now)
    return ParsedStream(
        events=tuple(events),
        observations=parser.observations,
        comments=parser.comments,
        observation_counts=parser.observation_counts,
        halted=parser.halted,
    )


def parsed_stream_of(response: schemathesis.Response) -> ParsedStream:
    """``response``'s body parsed as a stream, once for all its readers (:mod:`.memo`)."""
    return remembered(response, "stream", lambda: parse_stream(
        response.content, arrivals=arrivals_of(response.request)))


def payloads(content: bytes | ParsedStream) -> list[JSON]:
    """The decoded ``data`` payloads: JSON values, and the string ``[DONE]`` as it is.

    Raises ``ValueError`` naming the event when a payload is not JSON or the stream's framing
    is broken (bytes that are not UTF-8, an event left without its blank line, a parser limit):
    the contract cannot describe such a stream, so schemathesis reports it as undecodable.
    """
    parsed = content if isinstance(content, ParsedStream) else parse_stream(content)
    broken = sorted(
        code for code in parsed.observation_counts
        if code in ("invalid-utf8", "unterminated-event", "line-too-long", "event-too-large")
    )
    if broken:
        raise ValueError(f"the event stream's framing is broken: {', '.join(broken)}")
    decoded: list[JSON] = []
    for position, event in enumerate(parsed.events):
        if event.data == DONE:
            decoded.append(DONE)
            continue
        try:
            decoded.append(parse_json(event.data))
        except ValueError as exc:
            raise ValueError(f"event {position} is neither JSON nor [DONE]: {exc}: "
                             f"{event.data[:120]!r}") from None
    return decoded


@schemathesis.deserializer(MEDIA_TYPE)
def event_stream(ctx: schemathesis.DeserializationContext, response: schemathesis.Response
                 ) -> list[list[JSON]]:
    """The decoded stream as the only item (see the module docstring).

    Schemathesis keeps the error of a stream that does not decode until the operation's
    scenario ends, traceback and all: it is raised from a frame that holds neither the
    response nor its parsed events (a few such streams of 16 MiB once held gigabytes).
    """
    try:
        return [payloads(parsed_stream_of(response))]
    except ValueError as exc:
        message = str(exc)
    del response, ctx
    raise ValueError(message)
