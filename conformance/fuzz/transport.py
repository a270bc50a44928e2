"""Every fuzz request goes through one guard: a request budget, and backoff on 429 / 503.

Schemathesis sends each request through its schema's transport (generation, coverage, shrinking
and the checks' own follow-up requests alike), so that is where a live endpoint is protected:
:class:`GuardedTransport` takes one unit of the budget per attempt, retries ``429 Too Many
Requests`` and ``503 Service Unavailable`` with exponential backoff, honouring ``Retry-After``
(RFC 9110 section 10.2.3), and records requests that failed on the network so they can be
reported with a reproduction. Every request goes the way the probes go: the run's TLS trust,
client certificate and proxy are passed explicitly (requests would otherwise read the
environment on its own terms). When the budget is spent it stops the engine and refuses further
requests with :class:`RequestBudgetSpent` (a ``KeyboardInterrupt``, the signal schemathesis
itself uses to end a run early).
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

import requests
import schemathesis
import urllib3
from schemathesis.specs.openapi.schemas import OpenApiSchema
from schemathesis.transport.requests import REQUESTS_TRANSPORT, RequestsTransport

from conformance.client import RETRY_STATUSES, parse_retry_after
from conformance.transport import DIRECT, Network, RecordedRequest

from .exchange import prepared_request


class RequestBudgetSpent(KeyboardInterrupt):
    """``--max-requests`` requests were sent; the run stops here."""


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
    sleep: Callable[[float], None] = time.sleep
    on_spent: Callable[[], None] | None = None
    sent: int = 0
    retried: int = 0
    waited: float = 0.0
    spent: bool = False
    network_failures: list[NetworkFailure] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def take(self) -> None:
        """Count one attempt; raise :class:`RequestBudgetSpent` when none is left."""
        with self._lock:
            if self.max_requests is not None and self.sent >= self.max_requests:
                first = not self.spent
                self.spent = True
            else:
                self.sent += 1
                return
        if first and self.on_spent is not None:
            self.on_spent()
        raise RequestBudgetSpent(f"--max-requests {self.max_requests} spent")

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
        guard = self.guard
        kwargs = {**kwargs, **guard.network.requests_kwargs()}  # the engine's defaults yield
        attempt = 0
        while True:
            guard.take()
            try:
                with _insecure_quietly(guard.network.insecure):
                    response = super().send(case, session=session, **dict(kwargs))
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
    return guarded
