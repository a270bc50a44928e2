"""Variants of the SSE framing (spec: the WHATWG event-stream format, which the data-only
stream of ``spec/completions.yaml`` follows): each writes the same events differently.

"If the line starts with a U+003A COLON character (:) -- Ignore the line." "Collect the
characters on the line after the first U+003A COLON character (:) ... If value starts with a
U+0020 SPACE character, remove it" (so ``data:x`` and ``data: x`` are the same). "Lines must be
separated by either a U+000D CARRIAGE RETURN U+000A LINE FEED (CRLF) character pair, a single
U+000A LINE FEED (LF) character, or a single U+000D CARRIAGE RETURN (CR) character."
"""

from __future__ import annotations

from dataclasses import replace

from .. import sse
from ..sse import Frame
from .base import Variant
from .registry import register


@register
class NoSpaceAfterColon(Variant):
    name = "no-space-after-colon"
    imitates = "SSE writers that send `data:x` (the space after the colon is optional)"
    description = "every event starts `data:` with no space before its data"

    def alter_frame(self, frame: Frame) -> Frame:
        prefix = sse.DATA_PREFIX
        if not frame.data.startswith(prefix):
            return frame
        return replace(frame, data=prefix.rstrip(b" ") + frame.data[len(prefix):])


@register
class Crlf(Variant):
    name = "crlf"
    imitates = "servers behind proxies or frameworks that end SSE lines with CRLF"
    description = "every line of the stream ends with CRLF instead of LF"

    def alter_frame(self, frame: Frame) -> Frame:
        # Encoded JSON holds no raw CR or LF: every one in the event is a line end.
        return replace(frame, data=frame.data.replace(b"\n", b"\r\n"))


KEEP_ALIVE = b": keep-alive\n\n"


@register
class Comments(Variant):
    name = "comments"
    imitates = "servers and proxies sending `: keep-alive` comment lines (sse-starlette's pings)"
    description = "a `: keep-alive` comment line (and blank line) before every event"

    def alter_frame(self, frame: Frame) -> Frame:
        return replace(frame, data=KEEP_ALIVE + frame.data)
