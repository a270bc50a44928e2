"""The mutable state of one recording in progress, frozen into an ``Exchange`` at the end.

It owns the accounting every limit depends on: bytes read, bytes kept, bytes decoded for the SSE
parser and events recorded, each checked as a chunk arrives so a limit stops the read at once.
"""

from __future__ import annotations

import time
from types import SimpleNamespace

import aiohttp

from conformance.sse import SSEEvent, SSEParser

from .budget import MemoryBudget
from .decoding import ContentDecoder
from .exchange import Exchange, RecordedRequest, Timings
from .failures import Failure
from .limits import Limits, Termination

MAX_CHUNK_TIMES = 4096
"""Body reads whose arrival time is kept one by one (a probe's stream has a few hundred)."""


class Recording:
    """Mutable state of one recording; :meth:`build` freezes it into an :class:`Exchange`."""

    def __init__(self, request: RecordedRequest, limits: Limits,
                 budget: MemoryBudget | None = None) -> None:
        self.request = request
        self.limits = limits
        self.budget = budget
        self.t0 = time.perf_counter()
        self.wall = time.time()
        self.termination = Termination.EOF
        self.error: str | None = None
        self.failure: Failure | None = None
        self.response: aiohttp.ClientResponse | None = None
        self.headers_at: float | None = None
        self.first_byte_at: float | None = None
        self.body = bytearray()
        self.received = 0
        self.decoded = 0
        self.parser: SSEParser | None = None
        self.decoder: ContentDecoder | None = None
        self.events: list[SSEEvent] = []
        self.chunks: list[tuple[int, float]] = []
        self.head_began = False
        """Bytes of an answer came before a failure, though no whole head did."""
        self.connection = SimpleNamespace(reused=None)
        """Filled in by the session's connection trace (``reused``: True, False, or None when
        the session has no such trace)."""

    def now(self) -> float:
        return time.perf_counter() - self.t0

    def stop(self, termination: Termination, error: str | None = None,
             failure: Failure | None = None) -> None:
        self.termination = termination
        self.error = error
        self.failure = failure

    def _note_chunk(self, size: int, now: float) -> None:
        """Keep the chunk's size and time; past ``MAX_CHUNK_TIMES`` reads, later ones are merged
        into the last entry (a flood of one-byte reads must not cost memory per byte)."""
        if len(self.chunks) < MAX_CHUNK_TIMES:
            self.chunks.append((size, now))
        else:
            self.chunks[-1] = (self.chunks[-1][0] + size, now)

    def take(self, chunk: bytes, now: float) -> bool:
        """Account for and parse one chunk; False when a limit says stop."""
        if self.first_byte_at is None:
            self.first_byte_at = now
        room = self.limits.max_total_bytes - self.received
        over = len(chunk) > room
        if over:
            chunk = chunk[:room]
        self.received += len(chunk)
        self._note_chunk(len(chunk), now)
        keep = min(self.limits.max_body_bytes - len(self.body), len(chunk))
        if keep > 0:
            if not self._charge(keep):
                return False
            self.body += chunk[:keep]
        if self.parser is not None:
            text = chunk
            if self.decoder is not None:
                budget = self.limits.max_total_bytes - self.decoded
                text = self.decoder.decode(chunk, budget)
                if len(text) > budget:
                    text, over = text[:budget], True
                self.decoded += len(text)
            events = self.parser.feed(text, now)
            if events and not self._charge(
                    sum(MemoryBudget.event_cost(len(event.data)) for event in events)):
                return False
            self.events += events
            if len(self.events) > self.limits.max_events:
                del self.events[self.limits.max_events :]
                self.stop(Termination.EVENT_COUNT_LIMIT, f"more than {len(self.events)} events")
                return False
            if self.parser.halted is not None:
                halted = self.parser.halted
                detail = self.parser.observations[-1].message
                self.stop(Termination(halted), f"SSE parser stopped: {detail}")
                return False
        if over:
            self.stop(
                Termination.TOTAL_BYTES_LIMIT,
                f"more than {self.limits.max_total_bytes} body bytes",
            )
            return False
        return True

    def _charge(self, amount: int) -> bool:
        """Take ``amount`` kept bytes from the run's budget; when it is spent, stop."""
        if self.budget is None or self.budget.take(amount):
            return True
        self.stop(Termination.RUN_MEMORY_LIMIT, f"{self.budget.describe()} (--max-run-memory)")
        return False

    def build(self) -> Exchange:
        ended = self.now()
        parser, response = self.parser, self.response
        if parser is not None and self.termination.by_server:
            parser.close(ended)
        headers: tuple[tuple[str, str], ...] = ()
        if response is not None:
            headers = tuple(
                (name.decode("latin-1"), value.decode("latin-1"))
                for name, value in response.raw_headers
            )
        return Exchange(
            request=self.request,
            termination=self.termination,
            error=self.error,
            failure=self.failure,
            timings=Timings(self.wall, self.headers_at, self.first_byte_at, ended),
            status=response.status if response is not None else None,
            reason=response.reason if response is not None else None,
            http_version=(
                f"{response.version.major}.{response.version.minor}"
                if response is not None and response.version is not None
                else None
            ),
            headers=headers,
            body=bytes(self.body),
            body_truncated=self.received > len(self.body),
            bytes_received=self.received,
            chunks=tuple(self.chunks),
            content_encoding=response.headers.get("Content-Encoding") if response else None,
            is_sse=parser is not None,
            events=tuple(self.events),
            observations=parser.observations if parser is not None else (),
            comments=parser.comments if parser is not None else (),
            observation_counts=parser.observation_counts if parser is not None else {},
            reused_connection=self.connection.reused,
            head_began=self.head_began,
        )
