"""An aiohttp front on loopback that relays to a server and rewrites what passes through.

It stands for what sits between a client and a completions server in real deployments: a
server that renders its answers its own way (vLLM's extra fields and merged chunks,
``catalog/test_catalog_vllm_renderings.py``) or a gateway that adds headers, prefixes error
messages and re-serialises JSON (Portkey, LiteLLM: ``catalog/test_catalog_gateway_renderings.py``).
Each request's body may be rewritten on the way up (:data:`Forward`), each answer on the way
down (:data:`Rewrite`); the answer is read whole and sent whole (a stream arrives as one body,
its events intact).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import aiohttp
from aiohttp import web

HOP_BY_HOP = frozenset({"host", "content-length", "transfer-encoding", "connection",
                        "keep-alive"})


@dataclass
class Answer:
    """One relayed answer as the front may rewrite it: ``request`` is the body the client
    sent (before :data:`Forward`), ``media`` the answer's Content-Type."""

    request: bytes
    status: int
    media: str
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


Rewrite = Callable[[Answer], Answer]
Forward = Callable[[bytes], bytes]


def unchanged(answer: Answer) -> Answer:
    return answer


def as_sent(body: bytes) -> bytes:
    return body


@contextlib.asynccontextmanager
async def front(upstream: str, rewrite: Rewrite = unchanged, *,
                forward: Forward = as_sent) -> AsyncIterator[str]:
    """The front on 127.0.0.1 relaying to ``upstream`` (``http://HOST:PORT``); yields its own
    ``http://127.0.0.1:PORT``, the same paths below it."""
    session = aiohttp.ClientSession(auto_decompress=False)

    async def relay(request: web.Request) -> web.StreamResponse:
        sent = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP}
        async with session.request(request.method, upstream + request.path_qs,
                                   data=forward(sent) if sent else sent,
                                   headers=headers) as reply:
            answer = Answer(
                request=sent, status=reply.status,
                media=reply.headers.get("Content-Type", ""), body=await reply.read(),
                headers={k: v for k, v in reply.headers.items()
                         if k.lower() not in HOP_BY_HOP and k.lower() != "content-type"})
        answer = rewrite(answer)
        return web.Response(status=answer.status, body=answer.body,
                            headers={**answer.headers, "Content-Type": answer.media})

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", relay)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()
        await session.close()
