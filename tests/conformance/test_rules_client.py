"""The client: retries 429 / 503 honouring Retry-After, and the request budget."""

from __future__ import annotations

import asyncio
import time

import pytest
from aiohttp import web

import spec
from conformance.client import BudgetExhausted, Client, retry_after
from conformance.settings import Settings
from conformance.transport import Exchange, RecordedRequest, Termination, Timings, open_session


def settings(url: str, **options: object) -> Settings:
    profile = spec.get_profile("openai")
    return Settings(url, profile, "m", profile.features, **options)  # type: ignore[arg-type]


async def serve(statuses: list[tuple[int, dict[str, str]]], hits: list[float]) -> web.AppRunner:
    async def handle(request: web.Request) -> web.Response:
        hits.append(time.monotonic())
        status, headers = statuses[min(len(hits) - 1, len(statuses) - 1)]
        return web.json_response({"n": len(hits)}, status=status, headers=headers)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner


async def attempts(statuses: list[tuple[int, dict[str, str]]], **options: object):  # type: ignore[no-untyped-def]
    hits: list[float] = []
    waits: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        waits.append(seconds)

    runner = await serve(statuses, hits)
    port = runner.addresses[0][1]
    try:
        async with open_session() as session:
            client = Client(settings(f"http://127.0.0.1:{port}/v1", **options), session,
                            sleep=fake_sleep)
            exchange = await client.send("GET", f"http://127.0.0.1:{port}/v1/models")
    finally:
        await runner.cleanup()
    return exchange, hits, waits


def test_429_is_retried_after_the_servers_delay() -> None:
    plan = [(429, {"Retry-After": "7"}), (503, {}), (200, {})]
    exchange, hits, waits = asyncio.run(attempts(plan))
    assert exchange.status == 200 and len(hits) == 3
    assert waits == [7.0, 1.0]  # Retry-After, then exponential backoff (0.5 * 2**1)


def test_retries_give_up_and_waits_are_capped() -> None:
    plan = [(429, {"Retry-After": "3600"})]
    exchange, hits, waits = asyncio.run(attempts(plan, retries=2, max_retry_wait=5.0))
    assert exchange.status == 429 and len(hits) == 3 and waits == [5.0, 5.0]


def test_the_budget_counts_every_attempt() -> None:
    plan = [(429, {"Retry-After": "0"})]
    with pytest.raises(BudgetExhausted):
        asyncio.run(attempts(plan, max_requests=2))


def test_retry_after_forms() -> None:
    def with_header(value: str) -> Exchange:
        return Exchange(RecordedRequest("GET", "http://x", ()), Termination.EOF, Timings(0.0),
                        status=429, headers=(("Retry-After", value),))

    assert retry_after(with_header("12")) == 12.0
    assert retry_after(with_header("Wed, 21 Oct 2015 07:28:00 GMT"), now=1445412470.0) == 10.0
    assert retry_after(with_header("soon")) is None
