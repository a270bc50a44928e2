"""Incremental splitting of an event stream's bytes into lines.

WHATWG HTML 9.2.6 (https://html.spec.whatwg.org/multipage/server-sent-events.html#parsing-an-event-stream):
"One leading U+FEFF BYTE ORDER MARK character must be ignored if any are present." Lines end in
"a U+000D CARRIAGE RETURN U+000A LINE FEED (CRLF) character pair, a single U+000A LINE FEED (LF)
character not preceded by a U+000D CARRIAGE RETURN (CR) character, and a single U+000D CARRIAGE
RETURN (CR) character not followed by a U+000A LINE FEED (LF) character."

Those are exactly the boundaries of ``bytes.splitlines``, so splitting runs in C. The only state
carried between chunks is a partial line, the first bytes while a BOM is still possible, and
whether the previous chunk ended in CR. Such a CR ends its line at once (dispatch is never held
back by a chunk boundary); a LF opening the next chunk is then the rest of that CRLF and is
skipped, reported as :attr:`Batch.continued_crlf`.
"""

from __future__ import annotations

from dataclasses import dataclass

BOM = b"\xef\xbb\xbf"
_CR = 0x0D
_LF = 0x0A


@dataclass(slots=True)
class Batch:
    """The complete lines a chunk finished, with line ends kept.

    ``start`` is the stream offset of ``lines[0]``, ``first_at`` the arrival time of its first
    byte (later lines began in the current chunk). ``bom`` is set on the batch that stripped the
    BOM; ``continued_crlf`` when the chunk began with the LF of a CRLF split by the previous one.
    """

    lines: list[bytes]
    start: int
    first_at: float
    bom: bool = False
    continued_crlf: bool = False


class LineSplitter:
    """Turns chunks into complete lines; keeps at most ``max_line_bytes`` of a partial line."""

    def __init__(self, max_line_bytes: int) -> None:
        self.max_line_bytes = max_line_bytes
        self.received = 0
        self._head: bytes | None = b""  # bytes seen while a BOM is possible; None once decided
        self._skip_lf = False
        self._pending = bytearray()
        self._pending_at = 0.0
        self._pending_start = 0

    @property
    def overflow(self) -> bool:
        """True when the partial line is longer than ``max_line_bytes``."""
        return len(self._pending) > self.max_line_bytes

    def partial(self) -> tuple[bytes, int, float]:
        """The bytes after the last line end: ``(bytes, stream offset, arrival time)``."""
        if self._head is not None:
            return self._head, 0, self._pending_at
        return bytes(self._pending), self._pending_start, self._pending_at

    def clear(self) -> None:
        self._pending = bytearray()
        self._head = None

    def push(self, chunk: bytes, now: float) -> Batch:
        """Split the next chunk of the stream, arrived at ``now``."""
        self.received += len(chunk)
        batch = Batch([], self.received, now)
        if self._head is not None:
            earlier, head = self._head, self._head + chunk
            if len(head) < len(BOM) and BOM.startswith(head):
                if not earlier:
                    self._pending_at = now
                self._head = head
                return batch
            self._head = None
            if head.startswith(BOM):
                batch.bom = True
                chunk = head[len(BOM) :]
            elif earlier:  # a BOM prefix that was not one: the start of a partial line
                self._pending = bytearray(earlier)
                self._pending_start = 0
        start = self.received - len(chunk)
        if self._skip_lf and chunk:
            self._skip_lf = False
            if chunk[0] == _LF:
                batch.continued_crlf = True
                chunk = chunk[1:]
                start += 1
        if not chunk:
            return batch
        has_eol = b"\n" in chunk or b"\r" in chunk
        if self._pending:
            if not has_eol:
                self._pending += chunk  # amortised: a long line never gets copied whole
                return batch
            data = bytes(self._pending) + chunk
            first_at = self._pending_at
            start = self._pending_start
        elif not has_eol:
            self._pending = bytearray(chunk)
            self._pending_at = now
            self._pending_start = start
            return batch
        else:
            data = chunk
            first_at = now
        lines = data.splitlines(keepends=True)
        last = lines[-1]
        if last[-1] != _LF and last[-1] != _CR:
            lines.pop()
            self._pending = bytearray(last)
            self._pending_at = now if lines else first_at
            self._pending_start = start + len(data) - len(last)
        else:
            self._pending = bytearray()
            self._skip_lf = last[-1] == _CR
        batch.lines, batch.start, batch.first_at = lines, start, first_at
        return batch
