"""The sessions' adapters under every fuzz request: each answer bounded, and a request lost on
a reused connection before any answer sent once more on a fresh connection.

A request that went out on a reused keep-alive connection which then failed before a single
response byte (reset, remote disconnected, broken pipe: a server closing an idle keep-alive
connection as the request went out) is sent once more on a fresh connection, taking one more
unit of the budget, before it counts as a network failure: the one rule ``conformance run``
follows too (:func:`conformance.transport.lost_on_reused_connection`). A request lost so on a
connection of its own is the server's failure at once. That happens in the session's
:class:`FreshRetryAdapter`, below schemathesis' own retries, so each attempt is counted once and
the retry is made whatever schemathesis version is installed.

Every answer is bounded too. Each request runs under a :class:`~conformance.fuzz.deadline.Watch`
(the request's total time, ``--timeout``, or what is left of the run's time budget if less),
which ends the header phase as well as the body; each body is read by
:func:`~conformance.fuzz.bounded.read_body` under the harness's byte limits, before schemathesis
sees it. A request the run's time budget cut ends the run (:class:`~.guard.TimeBudgetSpent`),
as the request budget does.
"""

from __future__ import annotations

from collections.abc import Mapping
from http.client import RemoteDisconnected
from typing import Any

import requests
import urllib3
from requests.adapters import HTTPAdapter

from conformance.transport import Termination, lost_before_answer, lost_on_reused_connection

from .bounded import ResponseTooLarge, ResponseTooSlow, read_body, too_slow
from .deadline import Watch, watch_pools
from .guard import RequestGuard, never_connected

_NO_ANSWER = (RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)
"""What urllib3 wraps as ``ProtocolError("Connection aborted.", ...)`` when the connection
failed while the request was sent or before the status line was read: no response byte came."""


def _termination(exc: requests.RequestException) -> Termination:
    """How ``conformance run``'s recorder would end the exchange that failed with ``exc``."""
    if isinstance(exc, (ResponseTooLarge, ResponseTooSlow)):
        return exc.termination
    if never_connected(exc):
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
    and limits, :func:`~conformance.fuzz.bounded.read_body`) and sends a request lost on a
    reused connection before any answer once more, on a connection of its own
    (:func:`~conformance.transport.lost_on_reused_connection`), under the guard's budget; a
    loss on a connection of its own, the resend's included, is raised as a network failure
    that no retry above it repeats."""

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
                response = self._answer(request, options, watch)
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

    def _answer(self, request: requests.PreparedRequest, options: dict[str, Any],
                watch: Watch) -> requests.Response:
        """The answer's status line and headers, sent once more on a fresh connection when the
        first was lost on a reused one before any answer."""
        try:
            return super().send(request, **options)
        except requests.ConnectionError as exc:
            termination, answered = _termination(exc), _answered(exc)
            if not lost_on_reused_connection(termination, answered, watch.reused):
                if lost_before_answer(termination, answered):
                    raise _final(exc, "on a fresh connection: not sent again") from exc
                raise
            # no room for the resend: the run stops here (RequestBudgetSpent), as `run` does;
            # a loss on a reused connection is never a finding (RFC 9112 section 9.3.1)
            self.guard.take()
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


def mount_guard(session: requests.Session, guard: RequestGuard) -> None:
    """Mount a :class:`FreshRetryAdapter` on ``session`` (once) for both schemes."""
    for prefix in ("https://", "http://"):
        adapter = session.adapters.get(prefix)
        if isinstance(adapter, FreshRetryAdapter) and adapter.guard is guard:
            continue
        if adapter is not None:
            adapter.close()
        session.mount(prefix, FreshRetryAdapter(guard))


