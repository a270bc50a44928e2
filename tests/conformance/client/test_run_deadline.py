"""A run is bounded in time as a whole (issue 39): ``--run-timeout``, and an early stop when the
server stops answering.

The client cases talk to small servers on loopback (one that accepts and never answers, one
that sends its headers and then nothing); the run cases are ``conformance run`` as a user runs
it, against the gatekeeper before the mock (the model listing answers, so first contact passes
and the catalog runs), slowed or silenced for completions. Wall times are bounded loosely: they
catch a hang, they are not speed targets.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp import web
from first_contact_support import catalog, cli, closing_server, gatekeeper, one_line, silent_server
from test_client import settings

from conformance.client import Client, DeadlineReached, ServerSilent
from conformance.model import Verdict
from conformance.target.embedded import EmbeddedMock
from conformance.transport import Exchange, Limits, Termination, open_session

SILENCE = "the server stopped answering: 3 requests in a row got no answer within --timeout 1 s"


async def serve_handler(handle: Callable[[web.Request], Awaitable[web.StreamResponse]],
                        ) -> web.AppRunner:
    """``handle`` on every path of 127.0.0.1 (``runner.addresses``); a handler the client gave
    up on is cancelled, and cleaning up waits for none."""
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(app, handler_cancellation=True, shutdown_timeout=0.1)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner


def quick(total_time: float) -> Limits:
    return Limits(total_time=total_time, idle_timeout=total_time, connect_timeout=total_time)


async def send_each(client: Client, url: str, count: int) -> list[Exchange | Exception]:
    """``count`` requests one after the other; a stop is kept as its exception."""
    sent: list[Exchange | Exception] = []
    for _ in range(count):
        try:
            sent.append(await client.send("GET", url))
        except (ServerSilent, DeadlineReached) as exc:
            sent.append(exc)
    return sent


def against_silent(options: dict[str, object], count: int) -> tuple[list[Exchange | Exception],
                                                                     Client, float]:
    async def go() -> tuple[list[Exchange | Exception], Client, float]:
        with silent_server() as port:
            url = f"http://127.0.0.1:{port}/v1"
            async with open_session() as session:
                client = Client(settings(url, **options), session)
                started = time.perf_counter()
                sent = await send_each(client, f"{url}/models", count)
                return sent, client, time.perf_counter() - started

    return asyncio.run(go())


# -- the client ----------------------------------------------------------------------------


def test_three_requests_in_a_row_without_an_answer_stop_the_client() -> None:
    sent, client, _ = against_silent({"limits": quick(0.3)}, 5)
    assert [type(item).__name__ for item in sent] == ["Exchange"] * 3 + ["ServerSilent"] * 2
    assert all(isinstance(item, Exchange) and item.termination is Termination.TOTAL_TIME_LIMIT
               for item in sent[:3])
    assert str(sent[3]) == ("the server stopped answering: 3 requests in a row got no answer "
                            "within --timeout 0.3 s")
    assert client.sent == 3 and client.answered == 0 and client.stopped == str(sent[3])


def test_a_closed_connection_costs_no_time_and_does_not_stop_the_client() -> None:
    """A server that closes each connection unanswered is judged by the rules (ERRORS-006 for
    one that dies after invalid input); only requests that waited their whole time count."""

    async def go() -> tuple[list[Exchange | Exception], Client]:
        with closing_server() as port:
            url = f"http://127.0.0.1:{port}/v1/models"
            async with open_session() as session:
                client = Client(settings(url, limits=quick(5)), session)
                return await send_each(client, url, 5), client

    sent, client = asyncio.run(go())
    assert all(isinstance(item, Exchange) and item.termination is Termination.CONNECTION_ERROR
               for item in sent), sent
    assert client.stopped is None


def test_headers_are_an_answer_however_slow_the_body() -> None:
    """A server that sends its status line and then nothing is slow or broken, not silent: the
    rules judge its exchanges, and the run goes on."""

    async def headers_then_nothing(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        await asyncio.sleep(3600)
        return response

    async def go() -> tuple[list[Exchange | Exception], Client]:
        runner = await serve_handler(headers_then_nothing)
        url = f"http://127.0.0.1:{runner.addresses[0][1]}/v1/models"
        try:
            async with open_session() as session:
                client = Client(settings(url, limits=quick(0.3)), session)
                return await send_each(client, url, 4), client
        finally:
            await runner.cleanup()

    sent, client = asyncio.run(go())
    assert all(isinstance(item, Exchange) and item.status == 200 for item in sent), sent
    assert client.answered == 4 and client.stopped is None


def test_the_run_deadline_cuts_a_request_in_flight_and_stops_the_next() -> None:
    """A request may take only what the run has left; cut by the deadline, it is not returned
    (the server was not judged slow at --timeout) and nothing more is sent."""
    sent, client, wall = against_silent({"limits": quick(30), "run_timeout": 0.5}, 3)
    reason = "the run's deadline (--run-timeout 0.5 s) passed before its requests were answered"
    assert [str(item) for item in sent] == [reason] * 3
    assert all(isinstance(item, DeadlineReached) for item in sent)
    assert client.sent == 1 and client.stopped == reason
    assert wall < 10  # about 0.5 s; loose, to catch a hang


def test_a_retry_is_not_waited_for_past_the_deadline() -> None:
    """Retry-After asks an hour, --timeout caps the wait at 50 s: with 10 s left in the run, the
    client gives up at once rather than sleep."""
    waits: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        waits.append(seconds)

    async def limited(request: web.Request) -> web.Response:
        return web.json_response({}, status=429, headers={"Retry-After": "3600"})

    async def go() -> None:
        runner = await serve_handler(limited)
        url = f"http://127.0.0.1:{runner.addresses[0][1]}/v1/models"
        try:
            async with open_session() as session:
                client = Client(settings(url, max_retry_wait=50.0, run_timeout=10.0), session,
                                sleep=fake_sleep)
                await client.send("GET", url)
        finally:
            await runner.cleanup()

    with pytest.raises(DeadlineReached, match=r"would pass during the 50 s wait"):
        asyncio.run(go())
    assert waits == []


# -- conformance run -----------------------------------------------------------------------


def completions(seconds: float) -> Callable[[str], float]:
    """A delay for every completion request; the model listing answers at once."""
    return lambda path: seconds if path.endswith("/completions") else 0.0


def test_a_server_that_stops_answering_completions_ends_the_run_in_one_line(
    mock: EmbeddedMock,
) -> None:
    """The listing answers (first contact passes), then no completion is ever answered: the run
    stops after three silent requests instead of waiting ~52 x --timeout / --concurrency."""
    with gatekeeper(mock, lambda *_: None, delay=completions(3600)) as (url, _):
        started = time.perf_counter()
        one_line(("--base-url", url, "--timeout", "1"),
                 f"{SILENCE}; nothing could be judged: look at its logs, or raise --timeout if "
                 "it is that slow")
        assert time.perf_counter() - started < 30  # about 2 s; loose, to catch a hang


def test_the_run_deadline_skips_the_rules_it_did_not_reach(
    mock: EmbeddedMock, tmp_path: Path,
) -> None:
    """Each completion takes 0.5 s, so the catalog needs several seconds: at --run-timeout 2 the
    run stops near 2 s. The rules judged keep their verdicts (all PASS: the mock is clean);
    the others SKIP naming the deadline, so the exit status is 0, and 1 under
    --fail-on-skip (the README's table)."""
    report = tmp_path / "r.json"
    with gatekeeper(mock, lambda *_: None, delay=completions(0.5)) as (url, _):
        started = time.perf_counter()
        status, out, err = cli("run", "-q", "--base-url", url, "--run-timeout", "2",
                               "--json", str(report))
        wall = time.perf_counter() - started
        assert status == 0, (out, err)
        assert err == ("conformance: the run stopped early: the run's deadline (--run-timeout "
                       "2 s) passed before its requests were answered (the rules it did not "
                       "reach SKIP; -v lists them)\n")
        assert 2 <= wall < 30  # about 2.5 s; loose, to catch a hang
        again, _, _ = cli("run", "-q", "--base-url", url, "--run-timeout", "2",
                          "--fail-on-skip")
    assert again == 1
    results = json.loads(report.read_text())["results"]
    verdicts = {item["verdict"] for item in results}
    assert verdicts <= {"PASS", "SKIP"}, verdicts
    deadline = [item for item in results if item["verdict"] == "SKIP"
                and "the run's deadline (--run-timeout 2 s) passed before" in item["message"]]
    assert deadline, [item["message"] for item in results if item["verdict"] == "SKIP"]
    assert any(item["verdict"] == "PASS" for item in results)


def test_the_clean_mock_is_judged_whole_within_the_default_deadline(mock: EmbeddedMock) -> None:
    result = catalog(mock.openai_url)
    assert result.stats.stopped is None
    assert result.stats.answered == result.stats.completions > 0
    assert {r.verdict for r in result.results} <= {Verdict.PASS, Verdict.SKIP}
    assert not [r for r in result.results if "deadline" in r.message
                or "stopped answering" in r.message]


def test_run_timeout_must_be_positive() -> None:
    status, _, err = cli("run", "--run-timeout", "0")
    assert status == 2
    assert err.strip() == "conformance: error: --run-timeout must be positive, got 0.0"

