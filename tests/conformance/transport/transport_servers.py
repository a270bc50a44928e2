"""Loopback servers for the recorder tests: a well-behaved aiohttp app and byte-exact raw ones
(answers for :func:`raw_server.serve_raw`, the raw server the test folders share).

Every server binds 127.0.0.1 on port 0 and is torn down completely (handlers cancelled, sockets
closed) so the tests run with warnings as errors.
"""

from __future__ import annotations

import asyncio
import gzip
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiohttp import web
from raw_server import RawHandler, read_request

MIB = 1 << 20
SSE_HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}


async def _stream(request: web.Request, **headers: str) -> web.StreamResponse:
    response = web.StreamResponse(headers={**SSE_HEADERS, **headers})
    await response.prepare(request)
    return response


async def sse_ok(request: web.Request) -> web.StreamResponse:
    response = await _stream(request)
    for i in range(3):
        await response.write(f'data: {{"i": {i}}}\n\n'.encode())
        await asyncio.sleep(0.01)
    await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response


async def endless(request: web.Request) -> web.StreamResponse:
    """Never ends; as fast as the client reads (or one event per 10 ms with ?slow)."""
    response = await _stream(request)
    slow = "slow" in request.query
    while True:
        await response.write(b'data: {"choices": [{"text": "x"}]}\n\n' * (1 if slow else 100))
        await asyncio.sleep(0.01 if slow else 0)


async def long_line(request: web.Request) -> web.StreamResponse:
    """A 100 MB line without a line end, produced lazily 64 KiB at a time."""
    response = await _stream(request)
    await response.write(b"data: ")
    block = b"a" * 65536
    for _ in range(100 * MIB // len(block)):
        await response.write(block)
    await response.write(b"\n\n")
    await response.write_eof()
    return response


async def drip(request: web.Request) -> web.StreamResponse:
    """One byte every 0.2 s, forever: never idle, never done."""
    response = await _stream(request)
    while True:
        await response.write(b"d" if request.query.get("first") else b":")
        await asyncio.sleep(0.2)


async def hang_after_event(request: web.Request) -> web.StreamResponse:
    response = await _stream(request)
    await response.write(b"data: only\n\n")
    await asyncio.sleep(3600)
    return response


async def invalid_utf8(request: web.Request) -> web.StreamResponse:
    response = await _stream(request)
    await response.write(b'data: {"text": "caf\xe9"}\n\ndata: [DONE]\n\n')
    await response.write_eof()
    return response


async def gzip_sse(request: web.Request) -> web.Response:
    """Compresses even though the client asked for identity."""
    body = gzip.compress(b"data: zipped\n\n" * 3)
    return web.Response(body=body, headers={**SSE_HEADERS, "Content-Encoding": "gzip"})


async def echo(request: web.Request) -> web.Response:
    payload = {
        "method": request.method,
        "headers": [[k.decode("latin-1"), v.decode("latin-1")] for k, v in request.raw_headers],
        "body": (await request.read()).decode(),
    }
    return web.json_response(payload, headers={"X-Case": "Kept", "x-multi": "1"})


async def big_json(request: web.Request) -> web.Response:
    return web.Response(body=b"[" + b"0," * (MIB // 2) + b"0]", content_type="application/json")


async def redirect(request: web.Request) -> web.Response:
    raise web.HTTPFound("/sse")


def make_app() -> web.Application:
    app = web.Application()
    app.router.add_get("/sse", sse_ok)
    app.router.add_post("/sse", sse_ok)
    app.router.add_get("/endless", endless)
    app.router.add_get("/long-line", long_line)
    app.router.add_get("/drip", drip)
    app.router.add_get("/hang", hang_after_event)
    app.router.add_get("/invalid-utf8", invalid_utf8)
    app.router.add_get("/gzip", gzip_sse)
    app.router.add_route("*", "/echo", echo)
    app.router.add_get("/big-json", big_json)
    app.router.add_get("/redirect", redirect)
    return app


@asynccontextmanager
async def serve_app() -> AsyncIterator[str]:
    """The aiohttp app on a loopback port; yields its base URL."""
    runner = web.AppRunner(make_app(), shutdown_timeout=0.2, handler_cancellation=True)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


def raw_response(payload: bytes, *, close: bool = True, hang: bool = False) -> RawHandler:
    """Answer every request with ``payload`` (status line and headers included) verbatim."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(payload)
        await writer.drain()
        if hang:
            await asyncio.sleep(3600)
        if close:
            writer.close()

    return handler


def free_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
