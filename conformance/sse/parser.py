"""Incremental, strict Server-Sent-Events parser over raw bytes.

Implements the WHATWG event-stream interpretation on the lines of :mod:`conformance.sse.lines`
(https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation):
"If the line is empty (a blank line): Dispatch the event. If the line starts with a U+003A COLON
character (:): Ignore the line. If the line contains a U+003A COLON character (:): Collect the
characters on the line before the first U+003A COLON character (:), and let field be that string.
[...] If value starts with a U+0020 SPACE character, remove it from value." A line without a
colon is a field name with an empty value. "Once the end of the file is reached, any pending data
must be discarded."

Everything the standard allows is accepted silently; every deviation becomes an
:class:`~conformance.sse.model.Observation` (codes in :mod:`conformance.sse.codes`). The parser
never decides pass or fail, and knows nothing of JSON.

Choices where the standard leaves room:

* A CR that ends a chunk ends its line at once (see :mod:`conformance.sse.lines`). If that CR
  was the blank line that dispatched an event, the event's ``raw`` ends with the lone CR; the
  LF that follows in the next chunk belongs to no event.
* Invalid UTF-8 is decoded with U+FFFD as browsers do, and flagged.
* A ``retry`` value that is empty is not an integer, so it is ignored and flagged.
* Limits: a line longer than ``max_line_bytes`` (line end excluded) or an event block larger than
  ``max_event_bytes`` is never buffered whole: the parser records the limit observation, drops
  its buffers and ignores all further input (:attr:`SSEParser.halted`).
"""

from __future__ import annotations

from . import codes
from .lines import BOM, LineSplitter
from .log import ObservationLog
from .model import Comment, Observation, SSEEvent

_COLON = 0x3A

DEFAULT_MAX_LINE_BYTES = 1 << 20
DEFAULT_MAX_EVENT_BYTES = 4 << 20


class SSEParser:
    """Feed raw response bytes as they arrive; get dispatched events back.

    ``now`` is any clock value the caller chooses (the recorder uses seconds since the request
    started); it is stamped on events and comments. Memory is bounded by the limits: at most one
    partial line, one event block, ``max_comments`` comments and ``max_observations_per_code``
    observations of each code are kept (all are counted).
    """

    def __init__(
        self,
        *,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
        max_comments: int = 10_000,
        max_observations_per_code: int = 100,
    ) -> None:
        if max_line_bytes < 1 or max_event_bytes < 1:
            raise ValueError("max_line_bytes and max_event_bytes must be positive")
        self._max_line = max_line_bytes
        self._max_event = max_event_bytes
        self._max_comments = max_comments
        self._lines = LineSplitter(max_line_bytes)
        # the current event block: starts at its first field line
        self._block_start = -1
        self._block_at = 0.0
        self._raw: list[bytes] = []
        self._raw_size = 0
        self._data: list[str] = []
        self._event_type = ""
        self._block_retry: int | None = None
        # stream state
        self._last_id = ""
        self._reconnection_time: int | None = None
        self._comments: list[Comment] = []
        self._log = ObservationLog(max_observations_per_code)
        self._observe = self._log.add
        self._halted: str | None = None
        self._closed = False
        self._discarded: SSEEvent | None = None

    # ----------------------------------------------------------------- accessors
    @property
    def bytes_received(self) -> int:
        """Every byte passed to :meth:`feed`, including any ignored after a halt."""
        return self._lines.received

    @property
    def observations(self) -> tuple[Observation, ...]:
        return tuple(self._log.items)

    @property
    def observation_counts(self) -> dict[str, int]:
        """How many times each code occurred, including those not kept."""
        return dict(self._log.counts)

    @property
    def comments(self) -> tuple[Comment, ...]:
        return tuple(self._comments)

    @property
    def halted(self) -> str | None:
        """The limit code (``line-too-long`` / ``event-too-large``) that stopped the parser."""
        return self._halted

    @property
    def last_event_id(self) -> str:
        """The WHATWG last event ID buffer (empty string when never set)."""
        return self._last_id

    @property
    def reconnection_time(self) -> int | None:
        """The last valid ``retry`` value in the stream, in milliseconds."""
        return self._reconnection_time

    @property
    def discarded(self) -> SSEEvent | None:
        """After :meth:`close`: the event a missing blank line kept from being dispatched."""
        return self._discarded

    # ----------------------------------------------------------------- input
    def feed(self, chunk: bytes, now: float) -> list[SSEEvent]:
        """Parse ``chunk`` (the next bytes of the stream, arrived at ``now``)."""
        if self._closed:
            raise RuntimeError("feed() after close()")
        if self._halted is not None:
            self._lines.received += len(chunk)
            return []
        batch = self._lines.push(chunk, now)
        if batch.bom:
            self._observe(codes.BOM, "leading U+FEFF byte order mark stripped", 0, BOM)
        if batch.continued_crlf and self._block_start >= 0 and not self._add_raw(b"\n"):
            return []
        events = self._process(batch.lines, batch.start, batch.first_at, now) if batch.lines else []
        if self._halted is None and self._lines.overflow:
            pending, start, _ = self._lines.partial()
            message = f"line exceeds {self._max_line} bytes without a line end"
            self._halt(codes.LINE_TOO_LONG, message, start, pending)
        return events

    def close(self, now: float) -> list[Observation]:
        """End of stream: discard what is pending, as browsers do; return new observations."""
        if self._closed:
            return []
        self._closed = True
        if self._halted is not None:
            return []
        before = len(self._log.items)
        pending, pending_start, pending_at = self._lines.partial()
        pending_is_data = False
        if pending:
            pending_is_data = pending.startswith(b"data") and pending[4:5] in (b"", b":")
            kind = "a data line" if pending_is_data else "a partial line"
            self._observe(
                codes.UNTERMINATED_LINE,
                f"stream ended inside {kind} ({len(pending)} bytes without a line end)",
                pending_start,
                pending,
            )
        if self._data or pending_is_data:
            started = self._block_start >= 0
            raw = b"".join(self._raw) + pending
            offset = self._block_start if started else pending_start
            message = "stream ended before the blank line that would dispatch the pending event"
            self._observe(codes.UNTERMINATED_EVENT, message, offset, raw)
            at = self._block_at if started else pending_at
            self._discarded = self._event(raw, offset, at, now)
        self._lines.clear()
        self._reset_block()
        return self._log.items[before:]

    # ----------------------------------------------------------------- internals
    def _process(self, lines: list[bytes], pos: int, at: float, now: float) -> list[SSEEvent]:
        events: list[SSEEvent] = []
        max_line = self._max_line
        for line in lines:
            size = len(line)
            content = line.rstrip(b"\r\n")
            if not content:  # blank line: dispatch
                if self._block_start >= 0:
                    if not self._add_raw(line):
                        return events
                    if self._data:
                        raw = b"".join(self._raw)
                        events.append(self._event(raw, self._block_start, self._block_at, now))
                    self._reset_block()
            elif len(content) > max_line:
                self._halt(codes.LINE_TOO_LONG, f"line of {len(content)} bytes", pos, content)
                return events
            elif content[0] == _COLON:
                if self._block_start >= 0 and not self._add_raw(line):
                    return events
                if len(self._comments) < self._max_comments:
                    text = self._decode(content[1:], pos + 1, content)
                    self._comments.append(Comment(text, pos, at))
                elif not content.isascii():
                    self._decode(content[1:], pos + 1, content)
            else:
                if self._block_start < 0:
                    self._block_start = pos
                    self._block_at = at
                if not self._add_raw(line):
                    return events
                try:
                    text = content.decode("utf-8")
                except UnicodeDecodeError:
                    text = self._decode(content, pos, content)
                if text[:5] == "data:":  # the hot path
                    self._data.append(text[6:] if text[5:6] == " " else text[5:])
                else:
                    self._field(text, pos, content)
            pos += size
            at = now
        return events

    def _field(self, text: str, pos: int, content: bytes) -> None:
        name, colon, value = text.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event_type = value
        elif name == "id":
            if "\0" in value:
                self._observe(codes.INVALID_ID, "id field contains U+0000 NULL", pos, content)
            else:
                self._last_id = value
        elif name == "retry":
            if value.isascii() and value.isdigit():
                self._block_retry = self._reconnection_time = int(value)
            else:
                self._observe(
                    codes.INVALID_RETRY, f"retry value {value[:40]!r} is not digits", pos, content
                )
        else:
            self._observe(codes.UNKNOWN_FIELD, f"unknown field {name[:40]!r} ignored", pos, content)

    def _event(self, raw: bytes, offset: int, at: float, now: float) -> SSEEvent:
        data, event_type, last_id = "\n".join(self._data), self._event_type, self._last_id
        return SSEEvent(
            data, event_type or None, last_id or None, self._block_retry, raw, offset, at, now
        )

    def _reset_block(self) -> None:
        self._block_start = -1
        self._raw = []
        self._raw_size = 0
        self._data = []
        self._event_type = ""
        self._block_retry = None

    def _add_raw(self, line: bytes) -> bool:
        self._raw_size += len(line)
        if self._raw_size > self._max_event:
            raw = b"".join(self._raw[:2])
            message = f"event block exceeds {self._max_event} bytes"
            self._halt(codes.EVENT_TOO_LARGE, message, self._block_start, raw)
            return False
        self._raw.append(line)
        return True

    def _halt(self, code: str, message: str, offset: int, raw: bytes) -> None:
        self._observe(code, message, offset, raw)
        self._halted = code
        self._lines.clear()
        self._reset_block()

    def _decode(self, content: bytes, pos: int, line: bytes) -> str:
        try:
            return content.decode("utf-8")
        except UnicodeDecodeError as exc:
            bad = content[exc.start : exc.end].hex(" ")
            self._observe(codes.INVALID_UTF8, f"invalid UTF-8 bytes {bad}", pos + exc.start, line)
            return content.decode("utf-8", "replace")
