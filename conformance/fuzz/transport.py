"""Every fuzz request goes through one guard: schemathesis' transport and sessions, bound to a
:class:`~conformance.fuzz.guard.RequestGuard`.

Schemathesis sends each request through its schema's transport (generation, coverage, shrinking
and the checks' own follow-up requests alike), so that is where a live endpoint is protected:
:class:`GuardedTransport` takes one unit of the guard's budget per attempt, retries ``429`` and
``503`` as the guard says, records requests that failed on the network, and sends each request
on a session whose adapters bound the answer and retry a request lost on a reused connection
once on a fresh connection (:mod:`.adapters`). Every request goes the way the probes go: the
run's TLS trust, client certificate and proxy are passed explicitly (requests would otherwise
read the environment on its own terms). When the budget is spent the guard stops the engine
and refuses further requests (:class:`~conformance.fuzz.guard.RequestBudgetSpent`).
"""

from __future__ import annotations

import contextlib
import warnings
import weakref
from collections.abc import Iterator
from typing import Any, cast

import requests
import schemathesis
import urllib3
from schemathesis.engine import context as st_context
from schemathesis.specs.openapi.schemas import OpenApiSchema
from schemathesis.transport.requests import (
    REQUESTS_TRANSPORT,
    RequestsTransport,
    SameHostRedirectsSession,
)

from conformance.client import RETRY_STATUSES

from . import memo
from .adapters import mount_guard
from .bounded import bounded_json
from .guard import RequestGuard


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
        mount_guard(session, guard)
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
            mount_guard(session, found)
        return session

    make_session.conformance_guarded = True  # type: ignore[attr-defined]
    st_context.make_session = make_session
