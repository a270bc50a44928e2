"""Stable observation codes recorded by the SSE parser.

The parser never judges a stream; it records every deviation from the WHATWG event-stream
format (https://html.spec.whatwg.org/multipage/server-sent-events.html#parsing-an-event-stream)
under one of these codes, and the conformance rules decide what each one means.
"""

from __future__ import annotations

BOM = "bom"
"""Informational: one leading U+FEFF was stripped ("One leading U+FEFF BYTE ORDER MARK character
must be ignored if any are present")."""

INVALID_UTF8 = "invalid-utf8"
"""Bytes that are not UTF-8; browsers decode them to U+FFFD, the parser does too and flags it."""

UNKNOWN_FIELD = "unknown-field"
"""A field other than data/event/id/retry (names are case-sensitive); browsers ignore it."""

INVALID_RETRY = "invalid-retry"
"""A retry value that is not only ASCII digits; browsers ignore the field."""

INVALID_ID = "invalid-id"
"""An id value containing U+0000 NULL; browsers ignore the field."""

UNTERMINATED_LINE = "unterminated-line"
"""Bytes after the last line end when the stream ended: not a line, so browsers discard them."""

UNTERMINATED_EVENT = "unterminated-event"
"""Data was pending when the stream ended without the blank line: browsers discard the event."""

LINE_TOO_LONG = "line-too-long"
"""Limit hit: a line longer than max_line_bytes; the parser discarded it and stopped."""

EVENT_TOO_LARGE = "event-too-large"
"""Limit hit: an event larger than max_event_bytes; the parser discarded it and stopped."""

LIMIT_CODES = frozenset({LINE_TOO_LONG, EVENT_TOO_LARGE})
"""Codes after which the parser is halted and reads nothing more."""

ALL_CODES = frozenset(
    {
        BOM,
        INVALID_UTF8,
        UNKNOWN_FIELD,
        INVALID_RETRY,
        INVALID_ID,
        UNTERMINATED_LINE,
        UNTERMINATED_EVENT,
        LINE_TOO_LONG,
        EVENT_TOO_LARGE,
    }
)
