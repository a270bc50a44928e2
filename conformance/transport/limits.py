"""Resource limits for one recorded exchange, and why a recording ended.

A hostile or broken server must never make the harness hang or buffer without bound: every
recording ends in exactly one :class:`Termination`, within the configured limits.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from conformance.sse import DEFAULT_MAX_EVENT_BYTES, DEFAULT_MAX_LINE_BYTES


@dataclass(frozen=True)
class Limits:
    """Bounds for one exchange; sizes in bytes, times in seconds.

    ``total_time`` runs from the start of the request (connecting included) to the end of the
    body. ``idle_timeout`` applies between body reads only: the time to the response headers is
    bounded by ``total_time`` alone, because a non-streaming completion legitimately sends its
    headers only once the whole text is generated. ``max_body_bytes`` is how much of the body the
    :class:`~conformance.transport.exchange.Exchange` keeps; ``max_total_bytes`` is how much is
    read at all (and fed to the SSE parser) before the connection is closed. ``max_events`` bounds
    memory against floods of tiny events (``data:\n\n`` costs ~30 times its size as a record).
    """

    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES
    max_total_bytes: int = 64 << 20
    max_body_bytes: int = 8 << 20
    max_events: int = 1_000_000
    total_time: float = 60.0
    idle_timeout: float = 15.0
    connect_timeout: float = 10.0

    def __post_init__(self) -> None:
        for name in ("max_line_bytes", "max_event_bytes", "max_total_bytes", "max_events"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be positive")
        if self.max_body_bytes < 0:
            raise ValueError("max_body_bytes must not be negative")
        for name in ("total_time", "idle_timeout", "connect_timeout"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive")


class Termination(str, enum.Enum):
    """How a recording ended. Members compare equal to their string values."""

    EOF = "eof"
    """The server ended the body normally."""
    TOTAL_BYTES_LIMIT = "total-bytes-limit"
    TOTAL_TIME_LIMIT = "total-time-limit"
    IDLE_TIMEOUT = "idle-timeout"
    LINE_TOO_LONG = "line-too-long"
    EVENT_TOO_LARGE = "event-too-large"
    EVENT_COUNT_LIMIT = "event-count-limit"
    RUN_MEMORY_LIMIT = "run-memory-limit"
    """What the run's exchanges keep together reached ``--max-run-bytes``
    (:class:`~conformance.transport.budget.MemoryBudget`)."""
    CONNECTION_ERROR = "connection-error"
    """The connection failed after connecting: reset, truncated body, malformed HTTP."""
    CONNECT_ERROR = "connect-error"
    """No connection: refused, DNS failure, TLS failure or ``connect_timeout``."""

    def __str__(self) -> str:
        return self.value

    @property
    def by_server(self) -> bool:
        """True when the server ended the exchange, False when a harness limit cut it."""
        return self in (Termination.EOF, Termination.CONNECTION_ERROR, Termination.CONNECT_ERROR)


def lost_before_answer(termination: Termination, answered: bool) -> bool:
    """True when the connection was made (not :attr:`Termination.CONNECT_ERROR`) and then
    failed (:attr:`Termination.CONNECTION_ERROR`) before a single response byte arrived
    (``answered`` is False): the server took the request and said nothing."""
    return termination is Termination.CONNECTION_ERROR and not answered


def lost_on_reused_connection(termination: Termination, answered: bool,
                              reused: bool | None) -> bool:
    """True when a request is sent once more, on a fresh connection, and its loss is no
    finding: it went out on a kept-alive connection that had carried an earlier exchange
    (``reused``) and that connection failed before a single response byte arrived
    (:func:`lost_before_answer`).

    A server may close an idle keep-alive connection just as the next request goes out on it;
    RFC 9112 section 9.3.1 and RFC 9110 section 9.2.2 let a client retry a request it knows
    was never answered, and the ``openai`` client resends on connection errors. That race is
    the connection pool's, not the server's conformance. A request lost on a connection of its
    own (``reused`` False, or None: not known to be reused) is the server's failure and is
    reported as it is. Both clients ask this one question: ``conformance run`` of its
    recorded exchanges, ``conformance fuzz`` of ``requests``' errors.
    """
    return reused is True and lost_before_answer(termination, answered)
