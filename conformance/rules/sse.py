"""SSE framing of completion streams.

WHATWG HTML §9.2.6 (event stream interpretation): "If the line is empty (a blank line):
Dispatch the event"; "Once the end of the file is reached, any pending data must be
discarded"; streams are "always decoded as UTF-8". OpenAI (CreateCompletionRequest.stream):
"tokens will be sent as data-only server-sent events as they become available, with the stream
terminated by a ``data: [DONE]`` message". Every valid variant (``data:`` without a space, CRLF
and CR line ends, comments, ``id:`` / ``retry:`` / ``event:`` fields, data split over lines) is
accepted by the parser and never flagged here.
"""

from __future__ import annotations

import json

from conformance.check_context import CheckContext
from conformance.model import Violation
from conformance.sse import codes
from conformance.transport import Termination
from conformance.views import StreamView, raw_text

from .base import MUST, OPENAI_STREAM, WHATWG, WHATWG_SSE, rule
from .common import streams

LIMIT_TERMINATIONS = frozenset(
    {
        Termination.IDLE_TIMEOUT,
        Termination.TOTAL_TIME_LIMIT,
        Termination.TOTAL_BYTES_LIMIT,
        Termination.LINE_TOO_LONG,
        Termination.EVENT_TOO_LARGE,
        Termination.EVENT_COUNT_LIMIT,
    }
)


def _ended_cleanly(view: StreamView) -> bool:
    return view.exchange.termination is Termination.EOF


def _framing_intact(view: StreamView) -> bool:
    counts = view.exchange.observation_counts
    return _ended_cleanly(view) and codes.UNTERMINATED_EVENT not in counts


def _observation(view: StreamView, code: str) -> tuple[int, bytes, str] | None:
    for observation in view.exchange.observations:
        if observation.code == code:
            return observation.offset, observation.raw, observation.message
    return None


@rule(
    "SSE-001", MUST, "Stream bytes are UTF-8",
    requirement="A completion stream is valid UTF-8: event streams are always decoded as UTF-8.",
    citation=f"{WHATWG_SSE} (\"Event streams are always decoded as UTF-8\")",
    source=WHATWG, probes=("greedy",), faults=("invalid-utf8",), scan=True,
)
def stream_is_utf8(ctx: CheckContext) -> None:
    for label, _, view in streams(ctx):
        found = _observation(view, codes.INVALID_UTF8)
        if found is not None:
            offset, raw, message = found
            raise Violation(
                f"bytes that are not UTF-8 at stream offset {offset}",
                expected="UTF-8 text", actual=message, exchange=label,
                evidence=raw_text(raw),
            )


@rule(
    "SSE-002", MUST, "Every event ends with a blank line",
    requirement="Each event, including the last, is terminated by a blank line; an "
    "unterminated event is discarded by every SSE client.",
    citation=f"{WHATWG_SSE} (\"any pending data must be discarded\")",
    source=WHATWG, probes=("greedy",), faults=("event-unterminated",), scan=True,
)
def events_terminated(ctx: CheckContext) -> None:
    for label, _, view in streams(ctx):
        if not _ended_cleanly(view):
            continue
        found = _observation(view, codes.UNTERMINATED_EVENT)
        if found is not None:
            _, raw, _ = found
            raise Violation(
                "the stream ended inside an event: no blank line dispatched it",
                expected="a blank line after the event", actual="end of stream",
                exchange=label, evidence=raw_text(raw),
            )


def _all_lines_json(data: str) -> bool:
    lines = data.split("\n")
    if len(lines) < 2:
        return False
    try:
        return all(isinstance(json.loads(line), dict) for line in lines)
    except ValueError:
        return False


@rule(
    "SSE-003", MUST, "Each chunk is its own event",
    requirement="Chunks are separated by blank lines, so each event's data is one chunk; two "
    "data lines without a blank line between them merge into one event.",
    citation=f"{WHATWG_SSE}; spec/completions.yaml info.description (\"one JSON chunk per "
    "`data:` line\")",
    source=WHATWG, probes=("greedy",), faults=("events-not-separated",), scan=True,
)
def chunks_are_separate_events(ctx: CheckContext) -> None:
    for label, _, view in streams(ctx):
        for payload in view.invalid:
            if _all_lines_json(payload.event.data):
                raise Violation(
                    f"event {payload.position} holds several JSON chunks on separate data lines",
                    expected="one chunk per event (a blank line after each)",
                    actual=f"{payload.event.data.count(chr(10)) + 1} chunks in one event",
                    exchange=label, evidence=raw_text(payload.event.raw),
                )


@rule(
    "SSE-004", MUST, "Every payload is one JSON object",
    requirement="Every event's data, except the [DONE] sentinel, parses as one JSON object.",
    citation="spec/completions.yaml#/components/schemas/CompletionEventStream",
    source=WHATWG, probes=("greedy",), faults=("json-split",), scan=True,
)
def payloads_are_json(ctx: CheckContext) -> None:
    for label, _, view in streams(ctx):
        for payload in view.invalid:
            if _all_lines_json(payload.event.data):
                continue  # SSE-003's defect
            raise Violation(
                f"event {payload.position}: {payload.problem}",
                expected="a JSON object or [DONE]", actual=payload.event.data[:200],
                exchange=label, evidence=raw_text(payload.event.raw),
            )


@rule(
    "SSE-005", MUST, "The stream sends data: [DONE]",
    requirement="A completion stream is terminated by a `data: [DONE]` event.",
    citation=OPENAI_STREAM + " (\"the stream terminated by a data: [DONE] message\")",
    source=WHATWG, probes=("greedy",), faults=("done-missing",), scan=True,
)
def done_sent(ctx: CheckContext) -> None:
    for label, _, view in streams(ctx):
        if not _framing_intact(view) or view.errors:
            continue
        if not view.dones:
            last = view.payloads[-1].event.raw if view.payloads else b""
            raise Violation(
                "the stream ended without data: [DONE]",
                expected="data: [DONE]", actual="end of stream", exchange=label,
                evidence=raw_text(last),
            )


@rule(
    "SSE-006", MUST, "[DONE] is sent once",
    requirement="The [DONE] sentinel appears exactly once.",
    citation=OPENAI_STREAM,
    source=WHATWG, probes=("greedy",), faults=("done-doubled",), scan=True,
)
def done_once(ctx: CheckContext) -> None:
    for label, _, view in streams(ctx):
        if len(view.dones) > 1:
            raise Violation(
                f"[DONE] was sent {len(view.dones)} times",
                expected=1, actual=len(view.dones), exchange=label,
                evidence=raw_text(view.dones[1].event.raw),
            )


@rule(
    "SSE-007", MUST, "Nothing follows [DONE]",
    requirement="No event other than [DONE] itself comes after the [DONE] sentinel.",
    citation=OPENAI_STREAM + "; " + "docs/bug-classes.md #9",
    source=WHATWG, probes=("greedy",), faults=("data-after-done",), scan=True,
)
def nothing_after_done(ctx: CheckContext) -> None:
    for label, _, view in streams(ctx):
        late = [p for p in view.after_done if not p.is_done]
        if late:
            raise Violation(
                f"{len(late)} event(s) after [DONE]",
                expected="end of stream after [DONE]", actual=late[0].event.data[:200],
                exchange=label, evidence=raw_text(late[0].event.raw),
            )


@rule(
    "SSE-008", MUST, "The connection is not dropped mid-stream",
    requirement="The server ends the response body normally; it does not abort the connection "
    "before the stream is complete.",
    citation=OPENAI_STREAM + "; docs/bug-classes.md #13",
    source=WHATWG, probes=("greedy",), faults=("disconnect-mid-stream",), scan=True,
)
def connection_kept(ctx: CheckContext) -> None:
    for label, _, view in streams(ctx):
        if view.exchange.termination is Termination.CONNECTION_ERROR:
            tail = view.payloads[-1].event.raw if view.payloads else b""
            raise Violation(
                f"the connection broke after {len(view.payloads)} event(s): {view.exchange.error}",
                expected="a complete stream ending in [DONE]",
                actual=str(view.exchange.termination), exchange=label, evidence=raw_text(tail),
            )


@rule(
    "SSE-009", MUST, "The stream ends within the limits",
    requirement="A stream makes progress until it ends: no pause longer than the idle timeout, "
    "no line or event beyond the size limits, done within the total time and size.",
    citation=OPENAI_STREAM + " (\"sent ... as they become available\")",
    source=WHATWG, probes=("greedy",), faults=("stall",), scan=True,
)
def stream_ends_within_limits(ctx: CheckContext) -> None:
    for label, _, view in streams(ctx):
        termination = view.exchange.termination
        if termination in LIMIT_TERMINATIONS:
            tail = view.payloads[-1].event.raw if view.payloads else b""
            raise Violation(
                f"the harness cut the stream: {view.exchange.error}",
                expected="a stream that ends by itself", actual=str(termination),
                exchange=label, evidence=raw_text(tail) or None,
            )
