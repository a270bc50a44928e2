"""The budget every fuzz request is counted against, and the backoff on 429 / 503.

:class:`RequestGuard` takes one unit of the request budget per attempt (``--max-requests``),
ends the run when its time budget is spent or when requests in a row get no whole answer
(:class:`BudgetSpent`: a ``KeyboardInterrupt``, the signal schemathesis itself uses to end a run
early), decides how long to wait before retrying ``429 Too Many Requests`` and ``503 Service
Unavailable`` (honouring ``Retry-After``, RFC 9110 section 10.2.3), and records the requests
that failed on the network so they can be reported with a reproduction
(:class:`NetworkFailure`). The adapters (:mod:`.adapters`) and schemathesis' transport
(:mod:`.transport`) consult it for every attempt.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NoReturn

import requests
import schemathesis

from conformance.client import SILENT_IN_A_ROW, STOPPED_ANSWERING, parse_retry_after
from conformance.run.settings import default_limits
from conformance.transport import DIRECT, Limits, Network, RecordedRequest

from .bounded import status_before
from .deadline import Watch
from .exchange import prepared_request


class BudgetSpent(KeyboardInterrupt):
    """The run's budget is spent; the run stops here (the engine ends on a
    ``KeyboardInterrupt``)."""


class RequestBudgetSpent(BudgetSpent):
    """``--max-requests`` requests were sent."""


class TimeBudgetSpent(BudgetSpent):
    """The run's time budget (``--time-budget``, or the default) is spent."""


class ServerSilent(BudgetSpent):
    """:data:`~conformance.client.SILENT_IN_A_ROW` requests in a row got no whole answer within
    their total time (``--timeout``): a server that drips or hangs would hold every further
    request as long, so the run stops, as ``conformance run`` does."""


@dataclass(frozen=True)
class NetworkFailure:
    """A request that got no complete response (refused, reset, cut mid-body, timed out)."""

    operation: str
    request: RecordedRequest
    error: str
    streamed: bool
    connected: bool
    """False when no connection was made at all (refused, DNS, connect timeout): then the
    target is unreachable, which is the run's problem rather than a finding."""
    status: int | None = None
    """The status line that came before the answer broke off (its body cut or too slow);
    None when none came."""
    case: schemathesis.Case | None = field(default=None, compare=False, repr=False)
    """The case whose request failed (what :mod:`conformance.fuzz.shrink` reduces)."""

    @property
    def kind(self) -> str:
        """The exception's class name (``ChunkedEncodingError``): failures of one kind are one
        finding."""
        return self.error.split(":", 1)[0]


@dataclass
class RequestGuard:
    """Counts attempts against ``max_requests`` and decides how long to back off."""

    max_requests: int | None = None
    retries: int = 3
    max_wait: float = 30.0
    secret_headers: tuple[str, ...] = ()
    network: Network = DIRECT
    """How every request reaches the server (TLS trust, client certificate, proxy), the same
    as the probes' (:meth:`~conformance.transport.Network.requests_kwargs`)."""
    limits: Limits = field(default_factory=default_limits)
    """Bounds of each answer: its total time (headers included) and its bytes."""
    time_budget: float | None = None
    """Seconds the run may send requests for, from its first (the engine's setup is not
    counted, as schemathesis' own ``max-time`` does not count it); no request outlives it."""
    deadline: float | None = None
    """When the time budget ends (``time.monotonic()``), set by the first request."""
    sleep: Callable[[float], None] = time.sleep
    on_spent: Callable[[], None] | None = None
    sent: int = 0
    retried: int = 0
    waited: float = 0.0
    spent: bool = False
    stop_reason: str | None = None
    """Why the run was stopped early (a budget spent), in words for the report."""
    network_failures: list[NetworkFailure] = field(default_factory=list)
    silent: int = 0
    """Requests in a row that got no whole answer within their total time."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def take(self) -> None:
        """Count one attempt; raise :class:`RequestBudgetSpent` when none is left, and
        :class:`TimeBudgetSpent` when the run's time is up."""
        deadline = self._deadline()
        if deadline is not None and time.monotonic() >= deadline:
            self.time_spent()
        if self.silent >= SILENT_IN_A_ROW:
            raise ServerSilent(str(self.stop_reason))
        with self._lock:
            if self.max_requests is not None and self.sent >= self.max_requests:
                pass
            else:
                self.sent += 1
                return
        self._stop(f"request budget of {self.max_requests} spent")
        raise RequestBudgetSpent(f"--max-requests {self.max_requests} spent")

    def _deadline(self) -> float | None:
        """The time budget's end, set by the first request that asks."""
        if self.deadline is None and self.time_budget is not None:
            with self._lock:
                if self.deadline is None:
                    self.deadline = time.monotonic() + self.time_budget
        return self.deadline

    def time_spent(self) -> NoReturn:
        """Stop the run: its time budget is spent."""
        self._stop("time budget spent")
        raise TimeBudgetSpent("the run's time budget spent")

    def _stop(self, reason: str) -> None:
        """Mark the run spent (the first reason stays) and stop the engine, once."""
        with self._lock:
            first = not self.spent
            self.spent = True
            if first:
                self.stop_reason = reason
        if first and self.on_spent is not None:
            self.on_spent()

    def heard(self, watch: Watch, *, answered: bool) -> None:
        """Count one attempt's end: a whole answer ends a row of silent requests, one that
        waited its whole total time in vain adds to it (a refused connection does neither),
        and the row's :data:`~conformance.client.SILENT_IN_A_ROW`-th stops the run."""
        if watch.expired and not watch.budget:
            with self._lock:
                self.silent += 1
                silent = self.silent
            if silent == SILENT_IN_A_ROW:
                self._stop(f"{STOPPED_ANSWERING}: {silent} requests in a row got no whole "
                           f"answer within --timeout {self.limits.total_time:g} s")
        elif answered:
            with self._lock:
                if self.silent < SILENT_IN_A_ROW:  # a stopped run stays stopped
                    self.silent = 0

    def watch(self) -> Watch:
        """The deadline of one request: its total time, or the run's time left if sooner."""
        seconds = self.limits.total_time
        deadline = self._deadline()
        if deadline is not None:
            left = deadline - time.monotonic()
            if left < seconds:
                return Watch(max(left, 0.001), budget=True)
        return Watch(seconds)

    def take_if_room(self) -> bool:
        """Count one more attempt when the budget allows it (the fresh-connection retry, which
        is skipped rather than stopping the run); False when none is left."""
        with self._lock:
            if self.max_requests is not None and self.sent >= self.max_requests:
                return False
            self.sent += 1
            return True

    def backoff(self, attempt: int, retry_after: str | None) -> float | None:
        """Seconds to wait before retrying, or None to give up (the wait would be too long)."""
        delay = parse_retry_after(retry_after)
        if delay is None:
            delay = 0.5 * 2**attempt
        if delay > self.max_wait:
            return None
        with self._lock:
            self.retried += 1
            self.waited += delay
        return delay

    def failed(self, operation: str, exc: requests.RequestException,
               prepared: requests.PreparedRequest, case: schemathesis.Case | None = None,
               ) -> None:
        """Record a request that got no complete response (``case``: the case that sent it)."""
        request = prepared_request(prepared, secret_headers=self.secret_headers)
        if self.network != DIRECT:  # its curl reproduction goes the way the request went
            request = dataclasses.replace(request, network=self.network.redacted())
        with self._lock:
            self.network_failures.append(NetworkFailure(
                operation, request, f"{type(exc).__name__}: {exc}"[:500], request.wants_stream,
                connected=not never_connected(exc), status=status_before(exc), case=case,
            ))


def never_connected(exc: requests.RequestException) -> bool:
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return True
    text = str(exc)
    return isinstance(exc, requests.ConnectionError) and (
        "NewConnectionError" in text or "Failed to establish" in text or "NameResolution" in text
    )


