"""Every fuzz request goes through one guard: a request budget, and backoff on 429 / 503.

Schemathesis sends each request through its schema's transport (generation, coverage, shrinking
and the checks' own follow-up requests alike), so that is where a live endpoint is protected:
:class:`GuardedTransport` takes one unit of the budget per attempt, retries ``429 Too Many
Requests`` and ``503 Service Unavailable`` with exponential backoff, honouring ``Retry-After``
(RFC 9110 section 10.2.3), and records requests that failed on the network so they can be
reported with a reproduction. A request whose connection failed before a single response byte
(reset, remote disconnected, broken pipe: a server closing an idle keep-alive connection as the
request went out) is sent once more on a fresh connection, taking one more unit of the budget,
before it counts as a network failure: the one rule ``conformance run`` follows too
(:func:`conformance.transport.lost_before_answer`). That happens in the session's
:class:`FreshRetryAdapter`, below schemathesis' own retries, so each attempt is counted once and
the retry is made whatever schemathesis version is installed. Every request goes the way the
probes go: the run's TLS trust, client certificate and proxy are passed explicitly (requests
would otherwise read the environment on its own terms). When the budget is spent it stops the
engine and refuses further requests with :class:`RequestBudgetSpent` (a ``KeyboardInterrupt``,
the signal schemathesis itself uses to end a run early).

Every answer is bounded too. Each request runs under a :class:`~conformance.fuzz.deadline.Watch`
(the request's total time, ``--timeout``, or what is left of the run's time budget if less),
which ends the header phase as well as the body; each body is read by
:func:`~conformance.fuzz.bounded.read_body` under the harness's byte limits, before schemathesis
sees it. A request the run's time budget cut ends the run (:class:`TimeBudgetSpent`), as the
request budget does.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.client import RemoteDisconnected
from typing import Any, NoReturn, cast

import requests
import schemathesis
import urllib3
from requests.adapters import HTTPAdapter
from schemathesis.engine import context as st_context
from schemathesis.specs.openapi.schemas import OpenApiSchema
from schemathesis.transport.requests import (
    REQUESTS_TRANSPORT,
    RequestsTransport,
    SameHostRedirectsSession,
)

from conformance.client import (
    RETRY_STATUSES,
    SILENT_IN_A_ROW,
    STOPPED_ANSWERING,
    parse_retry_after,
)
from conformance.settings import default_limits
from conformance.transport import (
    DIRECT,
    Limits,
    Network,
    RecordedRequest,
    Termination,
    lost_before_answer,
)

from . import memo
from .bounded import ResponseTooLarge, ResponseTooSlow, bounded_json, read_body, too_slow
from .deadline import Watch, watch_pools
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
                connected=not _never_connected(exc), case=case,
            ))


def _never_connected(exc: requests.RequestException) -> bool:
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return True
    text = str(exc)
    return isinstance(exc, requests.ConnectionError) and (
        "NewConnectionError" in text or "Failed to establish" in text or "NameResolution" in text
    )


_NO_ANSWER = (RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)
"""What urllib3 wraps as ``ProtocolError("Connection aborted.", ...)`` when the connection
failed while the request was sent or before the status line was read: no response byte came."""


def _termination(exc: requests.RequestException) -> Termination:
    """How ``conformance run``'s recorder would end the exchange that failed with ``exc``."""
    if isinstance(exc, (ResponseTooLarge, ResponseTooSlow)):
        return exc.termination
    if _never_connected(exc):
        return Termination.CONNECT_ERROR
    if isinstance(exc, requests.Timeout):
        return Termination.IDLE_TIMEOUT  # requests' read timeout bounds the wait between reads
    return Termination.CONNECTION_ERROR


def _answered(exc: requests.RequestException) -> bool:
    """False when the connection failed before a single response byte arrived."""
    reason = exc.args[0] if exc.args else None
    return not (isinstance(reason, urllib3.exceptions.ProtocolError) and len(reason.args) == 2
                and isinstance(reason.args[1], _NO_ANSWER))


class WatchedAdapter(HTTPAdapter):
    """An adapter whose connections hand their socket to the request's
    :class:`~conformance.fuzz.deadline.Watch` (:func:`~conformance.fuzz.deadline.watch_pools`)."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        watch_pools(self.poolmanager)

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        watch_pools(manager)
        return manager


class FreshRetryAdapter(WatchedAdapter):
    """A session's adapter that bounds every answer (the guard's :meth:`~RequestGuard.watch`
    and limits, :func:`~conformance.fuzz.bounded.read_body`) and sends a request lost before
    any answer once more, on a connection of its own
    (:func:`~conformance.transport.lost_before_answer`), under the guard's budget; a second
    loss is raised as a network failure that no retry above it repeats."""

    def __init__(self, guard: RequestGuard) -> None:
        super().__init__()
        self.guard = guard

    def send(self, request: requests.PreparedRequest, stream: bool = False,
             timeout: float | tuple[float | None, float | None] | None = None,
             verify: bool | str = True,
             cert: bytes | str | tuple[bytes | str, bytes | str] | None = None,
             proxies: Mapping[str, str] | None = None) -> requests.Response:
        # the body is read below, bounded, whatever the caller asked
        options: dict[str, Any] = {"stream": True, "timeout": timeout, "verify": verify,
                                   "cert": cert, "proxies": proxies}
        with self.guard.watch() as watch:
            answered = False
            try:
                response = self._answer(request, options)
            except requests.ConnectionError as exc:
                if not watch.expired:
                    raise
                if watch.budget:
                    self.guard.time_spent()
                self.guard.heard(watch, answered=False)
                raise too_slow(watch, where="the status line and headers did not end",
                               request=request) from exc
            try:
                read_body(response, self.guard.limits, watch)
                answered = True
            finally:
                self.guard.heard(watch, answered=answered)
                if watch.expired and watch.budget:  # the run's budget cut it, not the server
                    self.guard.time_spent()
        return response

    def _answer(self, request: requests.PreparedRequest, options: dict[str, Any]
                ) -> requests.Response:
        """The answer's status line and headers, sent once more on a fresh connection when the
        first was lost before any answer."""
        try:
            return super().send(request, **options)
        except requests.ConnectionError as exc:
            if not lost_before_answer(_termination(exc), _answered(exc)):
                raise
            if not self.guard.take_if_room():
                raise _final(exc, "not sent again: the request budget is spent") from exc
        fresh = WatchedAdapter()  # its own pool: the retry cannot land on another idle connection
        try:
            return fresh.send(request, **options)
        except requests.ConnectionError as again:
            raise _final(again, "the second attempt, on a fresh connection") from again
        finally:
            fresh.close()  # idle connections only: the answer's body is still to be read


def _final(exc: requests.ConnectionError, why: str) -> requests.ConnectionError:
    """``exc`` as a message rather than urllib3's ``ProtocolError``, so that nothing above the
    adapter (schemathesis 4.32+ resends a request dropped on a reused connection) sends the
    request once more, uncounted."""
    return requests.ConnectionError(f"{exc} ({why})", request=exc.request)


def _guarded(session: requests.Session, guard: RequestGuard) -> None:
    """Mount a :class:`FreshRetryAdapter` on ``session`` (once) for both schemes."""
    for prefix in ("https://", "http://"):
        adapter = session.adapters.get(prefix)
        if isinstance(adapter, FreshRetryAdapter) and adapter.guard is guard:
            continue
        if adapter is not None:
            adapter.close()
        session.mount(prefix, FreshRetryAdapter(guard))


@contextlib.contextmanager
def _insecure_quietly(insecure: bool) -> Iterator[None]:
    """Under ``--insecure`` urllib3 warns on every request; the reports say it once instead."""
    if not insecure:
        yield
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", urllib3.exceptions.InsecureRequestWarning)
        yield


class GuardedTransport(RequestsTransport):
    """Schemathesis' requests transport, every attempt under a :class:`RequestGuard`."""

    def __init__(self, guard: RequestGuard) -> None:
        super().__init__()
        self._copy_serializers_from(REQUESTS_TRANSPORT)
        self.guard = guard

    def send(self, case: schemathesis.Case, *, session: requests.Session | None = None,
             **kwargs: Any) -> schemathesis.Response:
        memo.forget()  # the previous response's readers are done with it: let it go
        guard = self.guard
        kwargs = {**kwargs, **guard.network.requests_kwargs()}  # the engine's defaults yield
        if session is None:  # what schemathesis would make for this one request, ours to close
            with SameHostRedirectsSession() as own:
                return self.send(case, session=own, **kwargs)
        _guarded(session, guard)
        attempt = 0
        while True:
            guard.take()
            try:
                with _insecure_quietly(guard.network.insecure):
                    response = bounded_json(super().send(case, session=session, **dict(kwargs)))
            except requests.RequestException as exc:
                sent = exc.request
                if not isinstance(sent, requests.PreparedRequest):
                    sent = self._prepared(case, session, kwargs)
                guard.failed(case.operation.label, exc, sent, case)
                raise
            if response.status_code not in RETRY_STATUSES or attempt >= guard.retries:
                return response
            values = response.headers.get("retry-after")
            delay = guard.backoff(attempt, values[0] if values else None)
            if delay is None:
                return response
            guard.sleep(delay)
            attempt += 1


    def _prepared(self, case: schemathesis.Case, session: requests.Session | None,
                  kwargs: dict[str, Any]) -> requests.PreparedRequest:
        """The request as sent, rebuilt (requests drops it from errors raised mid-body)."""
        data = self.serialize_case(case, **dict(kwargs))
        headers = {**(session.headers if session is not None else {}), **data["headers"]}
        return requests.Request(data["method"], data["url"], headers=headers,
                                json=data.get("json"), data=data.get("data")).prepare()


class GuardedOpenApiSchema(OpenApiSchema):
    """An OpenAPI schema whose requests go through a :class:`GuardedTransport`.

    Schemathesis resolves a schema's transport from its ``app``; this subclass (set on a loaded
    schema with :func:`guard_schema`) is the one seam that reaches every request it sends.
    """

    _guarded_transport: GuardedTransport

    @property
    def transport(self) -> GuardedTransport:  # type: ignore[override]
        return self._guarded_transport


def guard_schema(schema: OpenApiSchema, guard: RequestGuard) -> GuardedOpenApiSchema:
    if type(schema) is not OpenApiSchema:
        raise TypeError(f"expected an OpenAPI schema, got {type(schema).__name__}")
    schema.__class__ = GuardedOpenApiSchema
    guarded = cast(GuardedOpenApiSchema, schema)
    guarded._guarded_transport = GuardedTransport(guard)
    _guard_sessions(guarded.config, guard)
    return guarded


_SESSION_GUARDS: dict[int, RequestGuard] = {}
"""The guard of each guarded schema's configuration, by ``id`` (configurations are not
hashable); an entry goes with its configuration."""


def _guard_sessions(config: object, guard: RequestGuard) -> None:
    """Bound the sessions schemathesis makes for ``config`` itself.

    One request does not go through the transport: the engine's probing phase sends its
    probes (``GET`` the base URL) on a session of its own, with ``session.send``, and reads the
    whole body; against a compression bomb that alone took a run past 3 GB. Schemathesis makes
    that session, like its workers' sessions, with ``schemathesis.engine.context.make_session``
    (probing cannot be turned off), so that function is wrapped, once, to mount the guard's
    bounded adapter on the sessions of guarded configurations; other schemas' are untouched.
    Probes are not counted against the request budget: they are the engine's, not the search's.
    """
    key = id(config)
    _SESSION_GUARDS[key] = guard
    weakref.finalize(config, _SESSION_GUARDS.pop, key, None)
    original = st_context.make_session
    if getattr(original, "conformance_guarded", False):
        return

    def make_session(config: Any, *, operation: Any = None) -> requests.Session:
        session = original(config, operation=operation)
        found = _SESSION_GUARDS.get(id(config))
        if found is not None:
            _guarded(session, found)
        return session

    make_session.conformance_guarded = True  # type: ignore[attr-defined]
    st_context.make_session = make_session
