"""The harness's only way to talk to a server: recorded requests under a budget.

Every request goes through :meth:`Client.send`: it takes one unit of the ``--max-requests``
budget per attempt, waits for a slot of the ``--concurrency`` semaphore, records the exchange
with the transport's hard limits, and retries 429 / 503 answers with exponential backoff,
honouring ``Retry-After`` (RFC 9110 section 10.2.3: "either an HTTP-date or a number of
seconds"), up to ``Settings.retries`` times.

A request whose connection fails before a single response byte arrives is sent once more on a
fresh connection before it counts as a network failure: a server may close an idle keep-alive
connection just as the next request goes out on it (RFC 9112 section 9.3.1 lets a client retry
then), and that race is the connection pool's, not the server's conformance.
"""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections.abc import Awaitable, Callable

import aiohttp

from conformance.transport import Exchange, MemoryBudget, open_session, record
from conformance.transport import lost_before_answer as transport_lost_before_answer
from spec import JSON

from .settings import Settings

RETRY_STATUSES = frozenset({429, 503})


class BudgetExhausted(Exception):
    """``--max-requests`` requests were sent; no more will be."""


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


def lost_before_answer(exchange: Exchange) -> bool:
    """True when the connection failed before any response byte arrived (the one test,
    :func:`conformance.transport.lost_before_answer`, the fuzzer asks too)."""
    return transport_lost_before_answer(
        exchange.termination, exchange.status is not None or exchange.bytes_received > 0)


class Client:
    """Sends requests for probes; one per run, bound to one aiohttp session."""

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

    def _room(self) -> bool:
        cap = self.settings.max_requests
        return cap is None or self.sent < cap

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
        """Record one request (retrying 429 / 503); raises :class:`BudgetExhausted`."""
        headers = self.settings.request_headers()
        if content_type is not None:
            headers.append(("Content-Type", content_type))
        exchange: Exchange | None = None
        for attempt in range(self.settings.retries + 1):
            self._take()
            async with self._slots:
                exchange = await self._record(self.session, method, url, json_body, body,
                                              headers, stream)
                if lost_before_answer(exchange) and self._room():
                    self._take()
                    exchange = await self._on_fresh_connection(method, url, json_body, body,
                                                               headers, stream)
            if self._on_request is not None:
                self._on_request(exchange)
            if exchange.status not in RETRY_STATUSES or attempt == self.settings.retries:
                break
            wait = retry_after(exchange)
            if wait is None:
                wait = 0.5 * 2**attempt
            await self._sleep(min(wait, self.settings.max_retry_wait))
        if exchange is None:  # pragma: no cover - retries >= 0 always records once
            raise RuntimeError("no attempt was made")
        return exchange

    async def _record(
        self, session: aiohttp.ClientSession, method: str, url: str, json_body: JSON,
        body: bytes | None, headers: list[tuple[str, str]], stream: bool,
    ) -> Exchange:
        return await record(
            session, method, url, json_body=json_body, body=body, headers=headers,
            limits=self.settings.limits, sse=True if stream else None,
            secret_headers=self.settings.secret_header_names, network=self.settings.network,
            budget=self.memory,
        )

    async def _on_fresh_connection(
        self, method: str, url: str, json_body: JSON, body: bytes | None,
        headers: list[tuple[str, str]], stream: bool,
    ) -> Exchange:
        connector = aiohttp.TCPConnector(force_close=True)
        async with open_session(connector=connector) as fresh:
            return await self._record(fresh, method, url, json_body, body, headers, stream)
