"""The replay server: recorded exchanges served back, bytes and quirks included.

``create_replay_app(exchanges, timing=...)`` answers every method on every path from the
recording (:mod:`.matching` picks the exchange). The answer is the recorded one: status, reason,
headers in their order (hop-by-hop framing headers aside: aiohttp frames the body again, chunked
or with the recorded ``Content-Length``), and the raw body written in the pieces it arrived in,
at the times it arrived (``timing="recorded"``) or at once (``timing="none"``). A recorded
server that stopped sending stops sending here too, until the client gives up; a connection
that broke is broken at the same point. A request the recording does not hold gets 404 with
the error envelope, naming the closest recorded request and the first difference.

``GET /health`` is the replay server's own, as in the engine's mode: 200 once it accepts
connections, whatever the recording holds, so one readiness probe serves both modes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

from aiohttp import web

from .. import sse
from ..errors import ApiError
from .matching import Matcher
from .recording import RecordedExchange, media_type

log = logging.getLogger("mockserver.replay")
TIMINGS = ("recorded", "none")
FRAMING_HEADERS = frozenset({"transfer-encoding", "content-length", "connection", "keep-alive"})
HOLD_LIMIT = 600.0
"""Seconds a replayed hang lasts at most when the client never gives up."""
HOLD_POLL = 0.05
MATCHER: web.AppKey[Matcher] = web.AppKey("replay_matcher", Matcher)
TIMING: web.AppKey[str] = web.AppKey("replay_timing", str)
MAX_BODY: web.AppKey[int] = web.AppKey("replay_max_body_bytes", int)
RECORDED: web.AppKey[int] = web.AppKey("replay_recorded_exchanges", int)


def create_replay_app(
    exchanges: Iterable[RecordedExchange],
    *,
    timing: str = "recorded",
    max_body_bytes: int = 1 << 20,
) -> web.Application:
    if timing not in TIMINGS:
        raise ValueError(f"--replay-timing must be one of {', '.join(TIMINGS)}, got {timing!r}")
    recorded = tuple(exchanges)
    app = web.Application(client_max_size=max_body_bytes)
    app[MATCHER] = Matcher(recorded)
    app[TIMING] = timing
    app[MAX_BODY] = max_body_bytes
    app[RECORDED] = len(recorded)
    app.router.add_get("/health", health)  # before the catch-all; other methods fall through
    app.router.add_route("*", "/{tail:.*}", replay)
    return app


async def health(request: web.Request) -> web.Response:
    """Liveness, as ``GET /health`` of the engine's mode (no key needed)."""
    body = {"status": "ok", "mode": "replay", "exchanges": request.app[RECORDED]}
    return web.Response(body=sse.encode_json(body), content_type="application/json")


async def replay(request: web.Request) -> web.StreamResponse:
    try:
        body = await request.read()
    except web.HTTPRequestEntityTooLarge:
        limit = request.app[MAX_BODY]
        return _error(ApiError(413, f"The request body is larger than {limit} bytes.",
                               code="request_too_large"))
    content_type = media_type(request.headers.get("Content-Type"))
    matcher = request.app[MATCHER]
    exchange = matcher.take(request.method, request.raw_path, content_type, body)
    if exchange is None:
        return _unmatched(matcher, request, content_type, body)
    return await _play(request, exchange, request.app[TIMING] == "recorded")


def _unmatched(
    matcher: Matcher, request: web.Request, content_type: str | None, body: bytes
) -> web.Response:
    closest, difference, param = matcher.closest(
        request.method, request.raw_path, content_type, body
    )
    message = (
        f"The recording has no exchange for {request.method} {request.raw_path}. The closest "
        f"recorded request is {closest.label!r} ({closest.method} {closest.target}); "
        f"first difference: {difference}."
    )
    log.warning("%s", message)
    return _error(ApiError(404, message, param=param, code="no_recorded_exchange"))


def _error(error: ApiError) -> web.Response:
    return web.Response(status=error.status, body=sse.encode_json(error.envelope()),
                        content_type="application/json")


async def _play(
    request: web.Request, exchange: RecordedExchange, timed: bool
) -> web.StreamResponse:
    if exchange.cut is not None:
        return _cut(exchange)
    loop = asyncio.get_running_loop()
    started = loop.time()

    async def until(at: float) -> None:
        delay = started + at - loop.time()
        if timed and delay > 0:
            await asyncio.sleep(delay)

    if exchange.status is None:  # no answer was recorded: the server hung or hung up
        if exchange.hangs:
            await until(exchange.ended_at)
            await _hold(request)
        _break(request)
        return web.Response()  # never written: the connection is gone
    await until(exchange.headers_at)
    response = web.StreamResponse(status=exchange.status, reason=exchange.reason)
    _copy_headers(exchange, response)
    await response.prepare(request)
    for piece, at in exchange.pieces():
        await until(at)
        await response.write(piece)
    if exchange.breaks:
        _break(request)
    elif exchange.termination != "eof":  # the harness stopped reading: the server went on
        await _hold(request)
        _break(request)
    else:
        await response.write_eof()
    return response


def _cut(exchange: RecordedExchange) -> web.Response:
    """A recording whose body is not whole is said so, never served as a shorter body."""
    message = (f"The recording of {exchange.label!r} cannot be replayed byte for byte: "
               f"{exchange.cut}.")
    log.warning("%s", message)
    error = ApiError(502, message, type="server_error", code="recording_cut",
                     headers={"X-Mock-Replay": "cut"})
    return web.Response(status=error.status, body=sse.encode_json(error.envelope()),
                        content_type="application/json", headers=error.headers)


def _copy_headers(exchange: RecordedExchange, response: web.StreamResponse) -> None:
    for name, value in exchange.headers:
        lowered = name.lower()
        if lowered == "content-length" and value.strip().isdigit():
            response.content_length = int(value)
        elif lowered == "transfer-encoding" and "chunked" in value.lower():
            response.enable_chunked_encoding()
        elif lowered == "connection" and value.strip().lower() == "close":
            response.force_close()
        elif lowered not in FRAMING_HEADERS:
            response.headers.add(name, value)


async def _hold(request: web.Request) -> None:
    """Send nothing until the client closes the connection (or ``HOLD_LIMIT`` passes)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + HOLD_LIMIT
    while loop.time() < deadline:
        transport = request.transport
        if transport is None or transport.is_closing():
            return
        await asyncio.sleep(HOLD_POLL)


def _break(request: web.Request) -> None:
    transport = request.transport
    if transport is not None:
        transport.abort()
