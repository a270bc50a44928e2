"""What one HTTP request/response looked like on the wire, as recorded by the harness.

Times are seconds since the request started (``time.perf_counter`` deltas); ``started_wall`` is
the matching Unix time. Secrets are redacted before anything is stored
(:mod:`conformance.transport.redact`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from conformance.sse import Comment, Observation, SSEEvent

from .failures import Failure
from .json_types import JSON
from .limits import Termination
from .network import Network


@dataclass(frozen=True)
class RecordedRequest:
    """The request as sent: ``headers`` are the ones the harness set (aiohttp adds ``Host``,
    ``Content-Length``, ``User-Agent`` and ``Accept`` itself), already redacted."""

    method: str
    url: str
    headers: tuple[tuple[str, str], ...]
    body: bytes = b""
    network: Network | None = None
    """How the request reached the server (proxy, TLS trust), redacted; None: directly."""

    def json(self) -> JSON:
        """The body parsed as JSON; ``None`` when empty or not JSON."""
        try:
            parsed: JSON = json.loads(self.body) if self.body else None
        except (ValueError, RecursionError):  # RecursionError: nested past Python's stack
            return None
        return parsed

    @property
    def wants_stream(self) -> bool:
        """True when the JSON body asks for ``"stream": true``."""
        body = self.json()
        return isinstance(body, dict) and body.get("stream") is True


@dataclass(frozen=True)
class Timings:
    """Seconds since the request started; ``None`` for points never reached."""

    started_wall: float
    headers_at: float | None = None
    first_byte_at: float | None = None
    ended_at: float = 0.0


@dataclass(frozen=True)
class Exchange:
    """One recorded exchange.

    ``headers`` are the response headers exactly as received (order, case and repeats kept).
    ``body`` holds at most ``Limits.max_body_bytes`` of the wire bytes (``body_truncated`` says
    if more arrived); ``bytes_received`` counts every body byte read. When the response is
    parsed as SSE (``is_sse``), ``events``/``observations``/``comments`` come from
    :class:`~conformance.sse.SSEParser`, which saw every byte read (decoded first if the server
    used a ``Content-Encoding``). ``chunks`` gives the size and arrival time of every read.
    ``termination`` says how the recording ended, ``error`` why.
    """

    request: RecordedRequest
    termination: Termination
    timings: Timings
    error: str | None = None
    failure: Failure | None = None
    """Why no answer came, from the exception's type (:mod:`conformance.transport.failures`);
    None when one came, or when a limit of the harness ended the exchange."""
    status: int | None = None
    reason: str | None = None
    http_version: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    body_truncated: bool = False
    bytes_received: int = 0
    chunks: tuple[tuple[int, float], ...] = ()
    """Each body read as it arrived: (bytes, seconds since the request started); a replay
    writes the body back in these pieces at these times."""
    content_encoding: str | None = None
    is_sse: bool = False
    events: tuple[SSEEvent, ...] = ()
    observations: tuple[Observation, ...] = ()
    comments: tuple[Comment, ...] = ()
    observation_counts: dict[str, int] = field(default_factory=dict, hash=False)
    reused_connection: bool | None = None
    """True when the request went out on a kept-alive connection that had carried an earlier
    exchange, False on a connection of its own; None when unknown (a session not made by
    :func:`~conformance.transport.open_session`, or an exchange not recorded live)."""
    head_began: bool = False
    """True when bytes of an answer arrived before the connection failed though no whole
    status line and headers did (``status`` is None): the server began to answer."""
    resent_after: str | None = None
    """When this exchange is the one resend of a request lost on a reused connection before
    any answer (:func:`~conformance.transport.lost_on_reused_connection`), the first
    attempt's error; the lost attempt is no finding, and a report may say it happened."""

    def header(self, name: str) -> str | None:
        """The first response header of that name (case-insensitive), else ``None``."""
        lowered = name.lower()
        for key, value in self.headers:
            if key.lower() == lowered:
                return value
        return None

    def header_values(self, name: str) -> list[str]:
        """Every value of a response header, in order received."""
        lowered = name.lower()
        return [value for key, value in self.headers if key.lower() == lowered]

    @property
    def media_type(self) -> str | None:
        """The response ``Content-Type`` without parameters, lower-cased."""
        value = self.header("Content-Type")
        return value.split(";", 1)[0].strip().lower() if value is not None else None
