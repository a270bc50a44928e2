"""The harness's only way to talk to a server: recorded requests under a budget.

Every request goes through :meth:`Client.send`: it waits for a slot of the ``--concurrency``
semaphore, takes one unit of the ``--max-requests`` budget per attempt, records the exchange
with the transport's hard limits, and retries 429 / 503 answers with exponential backoff,
honouring ``Retry-After`` (RFC 9110 section 10.2.3: "either an HTTP-date or a number of
seconds"), up to ``Settings.retries`` times.

A client stops sending (:class:`RunStopped`, which makes the probe asking SKIP) when one of
three things happens:

- ``--max-requests`` requests were sent (:class:`BudgetExhausted`);
- the run's deadline passed (:class:`DeadlineReached`, ``--run-timeout``): its clock starts
  with the client, each request may take only the time left (its ``Limits.total_time`` is
  cut to it), a retry's wait that would outlast it is not waited, and a request the deadline
  cut is not returned (the server was not slow at ``--timeout``, the run was out of time);
- the server stopped answering (:class:`ServerSilent`): :data:`SILENT_IN_A_ROW` requests in a
  row, in the order they ended, waited their whole time for nothing (:func:`waited_in_vain`:
  no status line within ``--timeout``, or no connection within the connect timeout). A
  request that got its status line is an answer, however slow the rest is, so a slow server
  that works is never stopped. A connection refused, reset or closed costs no time: it
  neither counts nor breaks the row, and the rules judge it (a server that dies after invalid
  input fails ERRORS-006 rather than cutting the run short).

A request that went out on a reused keep-alive connection which then failed before a single
response byte arrived is sent once more, on a fresh connection, and the lost attempt is never a
finding: a server may close an idle keep-alive connection just as the next request goes out on
it (RFC 9112 section 9.3.1 and RFC 9110 section 9.2.2 let a client retry then; the ``openai``
client does), and that race is the connection pool's, not the server's conformance. The resend
keeps the first attempt's error (``Exchange.resent_after``) and :attr:`Client.resent` counts
them. A request lost on a connection of its own is the server's failure and is returned as it
is; so is a resend lost too, and an answer cut off after its first byte.
"""

from __future__ import annotations

import asyncio
import dataclasses
import email.utils
import time
from collections.abc import Awaitable, Callable

import aiohttp

from conformance.run.settings import Settings
from conformance.transport import (
    Exchange,
    Failure,
    Limits,
    MemoryBudget,
    Termination,
    lost_on_reused_connection,
    open_session,
    record,
)
from spec import JSON

RETRY_STATUSES = frozenset({429, 503})
STOPPED_ANSWERING = "the server stopped answering"
"""How :class:`ServerSilent`'s reason begins (what a refused run's one line tells apart)."""
SILENT_IN_A_ROW = 3
"""Requests in a row that waited in vain and stop a run. One is a hiccup and two can be a
queue's bad luck; three, each given its whole ``--timeout``, is a server that has stopped
answering (a silent server then costs about one ``--timeout``, since ``--concurrency``
requests wait together, instead of one per request)."""


class RunStopped(Exception):
    """No more requests will be sent; the message says why, as a SKIP's reason does::

        RunStopped
         ├── BudgetExhausted   --max-requests reached
         ├── DeadlineReached   --run-timeout passed
         └── ServerSilent      SILENT_IN_A_ROW requests in a row got no answer
    """


class BudgetExhausted(RunStopped):
    """``--max-requests`` requests were sent; no more will be."""


class DeadlineReached(RunStopped):
    """The run's deadline (``--run-timeout``) passed; no more requests will be sent."""


class ServerSilent(RunStopped):
    """The server stopped answering; no more requests will be sent."""


def retry_after(exchange: Exchange, now: float | None = None) -> float | None:
    """Seconds the server asked to wait, from ``Retry-After``; None when absent or invalid."""
    return parse_retry_after(exchange.header("Retry-After"), now)


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """A ``Retry-After`` value in seconds (delay-seconds or an HTTP-date); None when invalid."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def waited_in_vain(exchange: Exchange) -> bool:
    """True when a request waited its whole time and not one byte of an answer came: a time
    limit ended it before the status line, or the connection was not made within the connect
    timeout."""
    if exchange.status is not None or exchange.bytes_received:
        return False
    return (exchange.termination in (Termination.TOTAL_TIME_LIMIT, Termination.IDLE_TIMEOUT)
            or exchange.failure is Failure.CONNECT_TIMEOUT)


def lost_on_reuse(exchange: Exchange) -> bool:
    """True when the request went out on a reused connection that failed before any response
    byte arrived, so it is sent once more on a fresh one (the one test,
    :func:`conformance.transport.lost_on_reused_connection`, the fuzzer asks too)."""
    return lost_on_reused_connection(
        exchange.termination,
        exchange.status is not None or exchange.bytes_received > 0 or exchange.head_began,
        exchange.reused_connection)


class Client:
    """Sends requests for probes; one per run, bound to one aiohttp session. The run's clock
    (``--run-timeout``) starts here."""

    def __init__(
        self,
        settings: Settings,
        session: aiohttp.ClientSession,
        *,
        on_request: Callable[[Exchange], None] | None = None,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        self.settings = settings
        self.session = session
        self.sent = 0
        self.answered = 0
        """Requests that got a status line (each after its retries)."""
        self.resent = 0
        """Requests lost on a reused connection before any answer and sent once more on a
        fresh one (:func:`lost_on_reuse`); none of them is a finding."""
        self._deadline = time.perf_counter() + settings.run_timeout
        self._silent = 0
        self._stop: RunStopped | None = None
        self.memory = MemoryBudget(settings.max_run_bytes)
        """What this client's exchanges keep together (one client per run)."""
        self._slots = asyncio.Semaphore(settings.concurrency)
        self._on_request = on_request
        self._sleep = sleep

    def _take(self) -> None:
        cap = self.settings.max_requests
        if cap is not None and self.sent >= cap:
            raise BudgetExhausted(f"--max-requests {cap} reached")
        self.sent += 1

    @property
    def stopped(self) -> str | None:
        """Why this client stopped sending before its requests were done (the run's deadline
        passed, or the server stopped answering), or None."""
        return None if self._stop is None else str(self._stop)

    def _left(self) -> float:
        return self._deadline - time.perf_counter()

    def _deadline_passed(self) -> DeadlineReached:
        stop = DeadlineReached(f"the run's deadline (--run-timeout "
                               f"{self.settings.run_timeout:g} s) passed before its requests "
                               "were answered")
        if self._stop is None:
            self._stop = stop
        return stop

    def _limits(self) -> Limits:
        """The limits of the next request: the run's, cut to the time left; raises
        :class:`RunStopped` when no request may be sent."""
        if self._stop is not None:
            raise type(self._stop)(str(self._stop))
        left = self._left()
        if left <= 0:
            raise self._deadline_passed()
        limits = self.settings.limits
        if left >= limits.total_time:
            return limits
        return dataclasses.replace(limits, total_time=left,
                                   idle_timeout=min(limits.idle_timeout, left),
                                   connect_timeout=min(limits.connect_timeout, left))

    def _cut_by_deadline(self, exchange: Exchange, limits: Limits) -> bool:
        """True when the run's deadline, not the server, ended ``exchange``: a time limit
        ended it that was cut to the time the run had left."""
        run = self.settings.limits
        return ((exchange.termination is Termination.TOTAL_TIME_LIMIT
                 and limits.total_time < run.total_time)
                or (exchange.failure is Failure.CONNECT_TIMEOUT
                    and limits.connect_timeout < run.connect_timeout))

    def _note(self, exchange: Exchange) -> None:
        """Count an answer, or one more request in a row that waited in vain."""
        if exchange.status is not None:
            self.answered += 1
        if not waited_in_vain(exchange):
            if exchange.status is not None or exchange.bytes_received:
                self._silent = 0  # an answer; a refused connection leaves the row as it is
            return
        self._silent += 1
        if self._silent >= SILENT_IN_A_ROW and self._stop is None:
            limits = self.settings.limits
            how = (f"(no connection within {limits.connect_timeout:g} s)"
                   if exchange.failure is Failure.CONNECT_TIMEOUT
                   else f"within --timeout {limits.total_time:g} s")
            self._stop = ServerSilent(f"{STOPPED_ANSWERING}: {self._silent} requests in a row "
                                      f"got no answer {how}")

    async def send(
        self,
        method: str,
        url: str,
        *,
        json_body: JSON = None,
        body: bytes | None = None,
        content_type: str | None = None,
        stream: bool = False,
    ) -> Exchange:
        """Record one request (retrying 429 / 503); raises :class:`RunStopped`."""
        headers = self.settings.request_headers()
        if content_type is not None:
            headers.append(("Content-Type", content_type))
        exchange: Exchange | None = None
        for attempt in range(self.settings.retries + 1):
            async with self._slots:
                limits = self._limits()
                self._take()
                exchange = await self._record(self.session, method, url, json_body, body,
                                              headers, stream, limits)
                if lost_on_reuse(exchange):
                    # no finding either way: resent, or the run stops (budget or deadline)
                    limits = self._limits()
                    self._take()
                    self.resent += 1
                    lost = exchange
                    exchange = await self._on_fresh_connection(method, url, json_body, body,
                                                               headers, stream, limits)
                    exchange = dataclasses.replace(exchange, resent_after=lost.error
                                                   or str(lost.termination))
            if self._on_request is not None:
                self._on_request(exchange)
            if self._cut_by_deadline(exchange, limits):
                raise self._deadline_passed()
            self._note(exchange)
            if exchange.status not in RETRY_STATUSES or attempt == self.settings.retries:
                break
            wait = retry_after(exchange)
            if wait is None:
                wait = 0.5 * 2**attempt
            wait = min(wait, self.settings.max_retry_wait)
            if wait >= self._left():  # the retry could not be sent in time: do not wait for it
                raise DeadlineReached(
                    f"the run's deadline (--run-timeout {self.settings.run_timeout:g} s) "
                    f"would pass during the {wait:g} s wait before a retry")
            await self._sleep(wait)
        if exchange is None:  # pragma: no cover - retries >= 0 always records once
            raise RuntimeError("no attempt was made")
        return exchange

    async def _record(
        self, session: aiohttp.ClientSession, method: str, url: str, json_body: JSON,
        body: bytes | None, headers: list[tuple[str, str]], stream: bool, limits: Limits,
    ) -> Exchange:
        return await record(
            session, method, url, json_body=json_body, body=body, headers=headers,
            limits=limits, sse=True if stream else None,
            secret_headers=self.settings.secret_header_names, network=self.settings.network,
            budget=self.memory,
        )

    async def _on_fresh_connection(
        self, method: str, url: str, json_body: JSON, body: bytes | None,
        headers: list[tuple[str, str]], stream: bool, limits: Limits,
    ) -> Exchange:
        connector = aiohttp.TCPConnector(force_close=True)
        async with open_session(connector=connector) as fresh:
            return await self._record(fresh, method, url, json_body, body, headers, stream,
                                      limits)
