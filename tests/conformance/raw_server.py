"""A raw TCP server on loopback, byte-exact: the one the recorder, rule and runner tests share.

A test that needs a server to send what no framework would (a 100 MB line, invalid UTF-8, a
body that never ends) gives :func:`serve_raw` a handler of the connection's reader and writer.
Every server binds 127.0.0.1 on port 0 and is torn down completely at exit (handlers
cancelled, sockets closed), so the tests run with warnings as errors.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

RawHandler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@asynccontextmanager
async def serve_raw(handler: RawHandler) -> AsyncIterator[str]:
    """A raw TCP server running ``handler`` per connection; yields ``http://127.0.0.1:PORT``.
    A client going away mid-answer ends its handler quietly; handlers are cancelled at exit."""
    tasks: set[asyncio.Task[None]] = set()

    async def run(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            tasks.add(task)
        try:
            await handler(reader, writer)
        except (asyncio.CancelledError, ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(run, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()
        for task in list(tasks):
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.wait_closed()


async def read_request(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    """One request off the connection: its head (request line and headers) and its body (as
    long as its Content-Length says; empty without one)."""
    head = await reader.readuntil(b"\r\n\r\n")
    body = b""
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            body = await reader.readexactly(int(line.split(b":", 1)[1]))
    return head, body
