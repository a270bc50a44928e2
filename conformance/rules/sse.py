"""SSE framing of completion streams.

WHATWG HTML §9.2.6 (event stream interpretation): "If the line is empty (a blank line):
Dispatch the event"; "Once the end of the file is reached, any pending data must be
discarded"; streams are "always decoded as UTF-8". OpenAI (CreateCompletionRequest.stream):
"tokens will be sent as data-only server-sent events as they become available, with the stream
terminated by a ``data: [DONE]`` message". Every valid variant (``data:`` without a space, CRLF
and CR line ends, comments, ``id:`` / ``retry:`` / ``event:`` fields, data split over lines) is
accepted by the parser and never flagged here.

A stream the harness cut at one of its limits was not seen to its end: SSE-009 fails it (the
server's endless or stalled stream) and the rules whose requirement needs the end (SSE-002 the
last event, SSE-005 ``[DONE]``, SSE-006 exactly once, SSE-007 nothing after it, SSE-008 not
dropped) pass it over, failing it only on a defect already seen. The rules about each byte or
event (SSE-001, SSE-003, SSE-004) judge the events seen.
"""

from __future__ import annotations

from conformance.model import Violation
from conformance.run.check_context import CheckContext
from conformance.sse import codes
from conformance.transport import Termination
from conformance.views import StreamView, raw_text
from conformance.views.endings import SERVER_LIMITS, unended
from conformance.wire_json import parse_json

from .base import MUST, OPENAI_STREAM, WHATWG, WHATWG_SSE, rule
from .common import event_streams, judge_whole, stream_views, streams, whole_streams


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
    """Judges the bytes seen, however the stream ended: a byte is UTF-8 or not on its own."""
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
    """The last event is the one a cut stream hides: only streams the server ended count."""
    for label, _, view in whole_streams(ctx):
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
        return all(isinstance(parse_json(line), dict) for line in lines)
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
    """Judges each event seen, however the stream ended (:func:`event_streams`)."""
    for label, _, view in event_streams(ctx):
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
    """Judges each event seen, however the stream ended (one nested deeper than
    :data:`~conformance.wire_json.MAX_JSON_DEPTH` levels is not a JSON object to read)."""
    for label, _, view in event_streams(ctx):
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
    """Needs the stream's end: a cut stream is passed over (SSE-009 judges it)."""
    for label, _, view in whole_streams(ctx):
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
    """Two [DONE] seen fail however the stream ended; "exactly once" needs the end."""
    for label, _, view in stream_views(ctx):
        if len(view.dones) > 1:
            ctx.judge(label)
            raise Violation(
                f"[DONE] was sent {len(view.dones)} times",
                expected=1, actual=len(view.dones), exchange=label,
                evidence=raw_text(view.dones[1].event.raw),
            )
        judge_whole(ctx, label, view)


@rule(
    "SSE-007", MUST, "Nothing follows [DONE]",
    requirement="No event other than [DONE] itself comes after the [DONE] sentinel.",
    citation=OPENAI_STREAM + "; " + "docs/bug-classes.md #9",
    source=WHATWG, probes=("greedy",), faults=("data-after-done",), scan=True,
)
def nothing_after_done(ctx: CheckContext) -> None:
    """An event seen after [DONE] fails however the stream ended; "nothing follows" needs the
    end."""
    for label, _, view in stream_views(ctx):
        late = [p for p in view.after_done if not p.is_done]
        if not late:
            judge_whole(ctx, label, view)
        else:
            ctx.judge(label)
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
    """Judges the streams the server ended, normally or by dropping the connection; a stream
    the harness cut might have been dropped later, so it is passed over (SSE-009 judges it)."""
    for label, _, view in stream_views(ctx):
        if view.exchange.termination.by_server:
            ctx.judge(label)
        else:
            ctx.pass_over(label, unended(view.exchange) or str(view.exchange.termination))
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
    """The one rule a stream cut at a server limit fails. The run's memory budget is the
    harness's own (``--max-run-memory``): a stream cut by it is passed over."""
    for label, _, view in stream_views(ctx):
        termination = view.exchange.termination
        if termination is Termination.RUN_MEMORY_LIMIT:
            ctx.pass_over(label, unended(view.exchange) or str(termination))
            continue
        ctx.judge(label)
        if termination in SERVER_LIMITS:
            tail = view.payloads[-1].event.raw if view.payloads else b""
            raise Violation(
                f"the harness cut the stream: {view.exchange.error}",
                expected="a stream that ends by itself", actual=str(termination),
                exchange=label, evidence=raw_text(tail) or None,
            )
