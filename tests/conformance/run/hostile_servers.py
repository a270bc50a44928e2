"""Small hostile servers on loopback: each answers ``GET /v1/models`` as a server should, then
misbehaves on every completion request in one way (issue 39's table).

A behaviour is an async function given the request's head and the writer; :func:`serving`
runs one on 127.0.0.1 in a thread and yields the ``/v1`` base URL.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import random
import threading
import zlib
from collections.abc import Awaitable, Callable, Iterator

MIB = 1 << 20
MODELS = json.dumps({"object": "list", "data": [
    {"id": "m", "object": "model", "created": 0, "owned_by": "hostile"}]}).encode()
CHUNK = (b'data: {"id":"c","object":"text_completion","created":1,"model":"m",'
         b'"choices":[{"index":0,"text":"x","logprobs":null,"finish_reason":null}]}\n\n')
SSE_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
JSON_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"

Behaviour = Callable[[bytes, asyncio.StreamWriter], Awaitable[None]]


@functools.cache
def gzip_bomb(megabytes: int = 512) -> bytes:
    """A gzip member of a JSON start and ``megabytes`` MiB of spaces (about 1000:1): the
    deflate output of one MiB of spaces after a sync flush repeats byte for byte once the
    window is full of spaces, so it is compressed twice and repeated, not compressed 512 times.
    """
    start = b'{"id":"c","object":"text_completion","choices":[{"text":"'
    block = b" " * MIB
    packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    first = packer.compress(start + block) + packer.flush(zlib.Z_SYNC_FLUSH)
    again = packer.compress(block) + packer.flush(zlib.Z_SYNC_FLUSH)
    repeat = packer.compress(block) + packer.flush(zlib.Z_SYNC_FLUSH)
    assert repeat == again, "the deflate stream did not settle"
    crc = zlib.crc32(start + block)
    for _ in range(megabytes - 1):
        crc = zlib.crc32(block, crc)
    size = len(start) + megabytes * MIB
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    trailer = crc.to_bytes(4, "little") + (size & 0xFFFFFFFF).to_bytes(4, "little")
    return header + first + again * (megabytes - 2) + repeat + packer.flush() + trailer


async def small_events(head: bytes, writer: asyncio.StreamWriter) -> None:
    writer.write(SSE_HEAD)
    while True:
        writer.write(CHUNK * 64)
        await writer.drain()


async def big_events(head: bytes, writer: asyncio.StreamWriter) -> None:
    event = CHUNK.replace(b'"text":"x"', b'"text":"' + b"x" * (512 << 10) + b'"')
    writer.write(SSE_HEAD)
    while True:
        writer.write(event)
        await writer.drain()


async def endless_json(head: bytes, writer: asyncio.StreamWriter) -> None:
    writer.write(JSON_HEAD + b"\r\n" + b'{"id":"c","choices":[{"text":"')
    block = b"x" * MIB
    while True:
        writer.write(block)
        await writer.drain()


async def gzip_bomb_json(head: bytes, writer: asyncio.StreamWriter) -> None:
    bomb = gzip_bomb()
    writer.write(JSON_HEAD + b"Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(bomb))
    writer.write(bomb)
    await writer.drain()


async def gzip_bomb_sse(head: bytes, writer: asyncio.StreamWriter) -> None:
    bomb = gzip_bomb()
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Encoding: gzip"
                 b"\r\nContent-Length: %d\r\n\r\n" % len(bomb))
    writer.write(bomb)
    await writer.drain()


async def long_line(head: bytes, writer: asyncio.StreamWriter) -> None:
    writer.write(SSE_HEAD + b"data: ")
    block = b"a" * (64 << 10)
    for _ in range(100 * MIB // len(block)):
        writer.write(block)
        await writer.drain()
    writer.write(b"\n\n")


async def random_bytes(head: bytes, writer: asyncio.StreamWriter) -> None:
    noise = random.Random(7)
    for _ in range(64):
        writer.write(noise.randbytes(64 << 10))
        await writer.drain()


async def deep_json(head: bytes, writer: asyncio.StreamWriter) -> None:
    body = b"[" * 100_000 + b"]" * 100_000
    writer.write(JSON_HEAD + b"Content-Length: %d\r\n\r\n" % len(body) + body)
    await writer.drain()


async def headers_without_body(head: bytes, writer: asyncio.StreamWriter) -> None:
    writer.write(JSON_HEAD + b"Content-Length: 100\r\n\r\n")
    await writer.drain()


async def length_lie(head: bytes, writer: asyncio.StreamWriter) -> None:
    """Promises more than it sends, and keeps the connection open."""
    writer.write(JSON_HEAD + b'Content-Length: 1000\r\n\r\n{"id":"c"}')
    await writer.drain()
    await asyncio.sleep(3600)


async def redirect_loop(head: bytes, writer: asyncio.StreamWriter) -> None:
    writer.write(b"HTTP/1.1 307 Temporary Redirect\r\nLocation: /v1/completions\r\n"
                 b"Content-Length: 0\r\n\r\n")
    await writer.drain()


async def close_delimited(head: bytes, writer: asyncio.StreamWriter) -> None:
    """HTTP/1.0 with no Content-Length: the body ends when the connection closes (valid)."""
    body = json.dumps({"id": "c", "object": "text_completion", "created": 1, "model": "m",
                       "choices": [{"index": 0, "text": " x", "logprobs": None,
                                    "finish_reason": "length"}]}).encode()
    writer.write(b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + body)
    await writer.drain()


BEHAVIOURS: dict[str, Behaviour] = {
    "small-events-flood": small_events,
    "512-kb-events-flood": big_events,
    "endless-json-body": endless_json,
    "gzip-bomb-json": gzip_bomb_json,
    "gzip-bomb-sse": gzip_bomb_sse,
    "100-mb-line": long_line,
    "random-bytes": random_bytes,
    "json-nested-100000-deep": deep_json,
    "headers-without-body": headers_without_body,
    "content-length-lie": length_lie,
    "redirect-loop": redirect_loop,
    "http-1.0-close-delimited": close_delimited,
}


async def _handle(behaviour: Behaviour, reader: asyncio.StreamReader,
                  writer: asyncio.StreamWriter) -> None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                await reader.readexactly(int(line.split(b":", 1)[1]))
        if b"/models" in head.split(b"\r\n", 1)[0]:
            writer.write(JSON_HEAD + b"Content-Length: %d\r\n\r\n" % len(MODELS) + MODELS)
            await writer.drain()
        else:
            await behaviour(head, writer)
    except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        pass
    except asyncio.CancelledError:
        # the server is stopping: drop what a flood left buffered and close now, or the
        # transport is still "closing" when the loop closes (an unclosed-transport warning)
        writer.transport.abort()
        raise
    finally:
        with contextlib.suppress(Exception):
            writer.close()


@contextlib.contextmanager
def serving(name: str) -> Iterator[str]:
    """The behaviour ``name`` on loopback; yields its ``http://127.0.0.1:PORT/v1``. On exit
    the server, its connections and its loop are closed (a flood never stops on its own)."""
    behaviour = BEHAVIOURS[name]
    loop = asyncio.new_event_loop()
    started = threading.Event()
    ports: list[int] = []

    async def serve() -> None:
        server = await asyncio.start_server(
            lambda r, w: _handle(behaviour, r, w), "127.0.0.1", 0)
        ports.append(server.sockets[0].getsockname()[1])
        started.set()
        try:
            await asyncio.Event().wait()  # until cancelled
        finally:
            server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await server.wait_closed()

    main = loop.create_task(serve())

    def run() -> None:
        with contextlib.suppress(asyncio.CancelledError):
            loop.run_until_complete(main)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    started.wait(10)
    try:
        yield f"http://127.0.0.1:{ports[0]}/v1"
    finally:
        loop.call_soon_threadsafe(main.cancel)
        thread.join(10)
        loop.close()
