"""Faults in SSE framing: the ``[DONE]`` sentinel and the ``data:`` events themselves.

Spec: "Streaming responses are data-only server-sent events: one JSON chunk per ``data:``
line, terminated by ``data: [DONE]``" (``spec/completions.yaml``, info.description). Each
fault bends ``mockserver.sse`` output deliberately; bug classes 9 and 13 of the research notes.
"""

from __future__ import annotations

from collections.abc import Iterator

from .. import sse
from ..sse import Frame
from .base import Fault, FaultContext
from .registry import register
from .shapes import is_finish_chunk, is_usage_chunk


class _FramingFault(Fault):
    hook = "frames"
    stream = True


@register
class DoneMissing(_FramingFault):
    name = "done-missing"
    description = "The stream ends without `data: [DONE]`."
    breaks = "A stream ends with exactly one `data: [DONE]` event."

    def alter_frames(self, frames: Iterator[Frame], ctx: FaultContext) -> Iterator[Frame]:
        return (frame for frame in frames if not frame.is_done)


@register
class DoneDoubled(_FramingFault):
    name = "done-doubled"
    description = "`data: [DONE]` is sent twice."
    breaks = "A stream ends with exactly one `data: [DONE]` event, and nothing follows it."

    def alter_frames(self, frames: Iterator[Frame], ctx: FaultContext) -> Iterator[Frame]:
        for frame in frames:
            yield frame
            if frame.is_done:
                yield frame


@register
class DoneEarly(_FramingFault):
    name = "done-early"
    description = "`[DONE]` comes before the finish and usage chunks; the stream then ends."
    breaks = "Content chunks, then finish chunks, then the usage chunk, then `[DONE]`."

    def alter_frames(self, frames: Iterator[Frame], ctx: FaultContext) -> Iterator[Frame]:
        for frame in frames:
            if frame.is_done or is_finish_chunk(frame.payload) or is_usage_chunk(frame.payload):
                break
            yield frame
        yield sse.done_frame()


@register
class DataAfterDone(_FramingFault):
    name = "data-after-done"
    description = "Another chunk event follows `data: [DONE]`."
    breaks = "Nothing follows `data: [DONE]`."

    def alter_frames(self, frames: Iterator[Frame], ctx: FaultContext) -> Iterator[Frame]:
        last: Frame | None = None
        for frame in frames:
            yield frame
            if frame.is_done and last is not None:
                yield last
            elif not frame.is_done:
                last = frame


@register
class EventUnterminated(_FramingFault):
    name = "event-unterminated"
    description = "The last event (`data: [DONE]`) lacks its blank line, so it is never dispatched."
    breaks = "Every SSE event ends with a blank line (an unterminated event is discarded)."

    def alter_frames(self, frames: Iterator[Frame], ctx: FaultContext) -> Iterator[Frame]:
        pending: Frame | None = None
        for frame in frames:
            if pending is not None:
                yield pending
            pending = frame
        if pending is not None:
            yield Frame(pending.payload, pending.data[: -len(sse.EVENT_END)] + b"\n")


@register
class EventsNotSeparated(_FramingFault):
    name = "events-not-separated"
    description = (
        "The first two chunk events are separated by a single newline, so they merge into one "
        "event with two data lines."
    )
    breaks = "Each chunk is its own SSE event: one `data:` line followed by a blank line."

    def alter_frames(self, frames: Iterator[Frame], ctx: FaultContext) -> Iterator[Frame]:
        merged = False
        for frame in frames:
            if not merged and frame.carries_choices:
                merged = True
                yield Frame(frame.payload, frame.data[: -len(sse.EVENT_END)] + b"\n")
            else:
                yield frame


@register
class JsonSplit(_FramingFault):
    name = "json-split"
    description = "The first chunk's JSON is split across two events."
    breaks = "Every `data:` payload except `[DONE]` is one complete JSON chunk."

    def alter_frames(self, frames: Iterator[Frame], ctx: FaultContext) -> Iterator[Frame]:
        split = False
        for frame in frames:
            if not split and frame.carries_choices:
                split = True
                data = sse.encode_json(frame.payload)
                half = len(data) // 2
                yield Frame(frame.payload, sse.event(data[:half]) + sse.event(data[half:]))
            else:
                yield frame


@register
class InvalidUtf8(_FramingFault):
    name = "invalid-utf8"
    description = "The first chunk's text contains bytes that are not valid UTF-8 (0xFF 0xFE)."
    breaks = "The stream is UTF-8 text (`text/event-stream` is always UTF-8)."

    def alter_frames(self, frames: Iterator[Frame], ctx: FaultContext) -> Iterator[Frame]:
        marker = b'"text":"'
        done = False
        for frame in frames:
            at = frame.data.find(marker)
            if not done and frame.carries_choices and at >= 0:
                done = True
                cut = at + len(marker)
                yield Frame(frame.payload, frame.data[:cut] + b"\xff\xfe" + frame.data[cut:])
            else:
                yield frame
