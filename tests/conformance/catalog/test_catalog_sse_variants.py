"""Every valid SSE variant passes: a loopback proxy rewrites the mock's framing.

WHATWG HTML §9.2.6 allows ``data:`` without a space, CRLF and CR line ends, ``:`` comments,
``id:`` / ``retry:`` / ``event:`` fields, a leading BOM, extra blank lines, and one event's data
spread over several ``data:`` lines (joined with a newline, which JSON reads as whitespace).
The proxy rewrites each streamed response and sends it in 7-byte pieces, so line ends also
fall across reads; the whole catalog must still pass.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable

import aiohttp
import pytest
from aiohttp import web
from harness_support import not_passing, settings_for

from conformance.rules import CATALOG
from conformance.run.runner import execute
from conformance.target.embedded import EmbeddedMock

Rewrite = Callable[[bytes], bytes]


def split_json_lines(body: bytes) -> bytes:
    """``data: {"id":"x","object":...}`` -> ``data: {"id":"x",`` + ``data: "object":...}``."""
    return re.sub(rb'^data: (\{"id":"[^"]*",)', rb"data: \1\ndata: ", body, flags=re.M)


VARIANTS: dict[str, Rewrite] = {
    "no-space-after-colon": lambda b: b.replace(b"data: ", b"data:"),
    "crlf-line-ends": lambda b: b.replace(b"\n", b"\r\n"),
    "cr-line-ends": lambda b: b.replace(b"\n", b"\r"),
    "comment-lines": lambda b: b": stream opened\n\n" + b.replace(b"data: ", b": ping\ndata: "),
    "id-retry-event-fields": lambda b: b.replace(
        b"data: ", b"id: 7\nretry: 1000\nevent: message\ndata: "),
    "leading-bom": lambda b: b"\xef\xbb\xbf" + b,
    "extra-blank-lines": lambda b: b.replace(b"\n\n", b"\n\n\n\n"),
    "json-over-two-data-lines": split_json_lines,
}

SIGNS = {
    "no-space-after-colon": b"data:{",
    "crlf-line-ends": b"\r\n\r\n",
    "cr-line-ends": b"\r\r",
    "comment-lines": b": ping\n",
    "id-retry-event-fields": b"retry: 1000\n",
    "leading-bom": b"\xef\xbb\xbf",
    "extra-blank-lines": b"\n\n\n\n",
    "json-over-two-data-lines": b'",\ndata: "',
}
"""Bytes that show the rewrite reached the harness."""

HOP_HEADERS = {"host", "content-length", "transfer-encoding", "connection"}


async def proxy(upstream: str, rewrite: Rewrite) -> tuple[web.AppRunner, str]:
    session = aiohttp.ClientSession(auto_decompress=False)

    async def handle(request: web.Request) -> web.StreamResponse:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_HEADERS}
        url = upstream + request.path_qs
        async with session.request(request.method, url, data=await request.read(),
                                   headers=headers) as answer:
            payload = await answer.read()
            media = answer.headers.get("Content-Type", "")
            if media.startswith("text/event-stream"):
                payload = rewrite(payload)
            response = web.StreamResponse(status=answer.status, headers={"Content-Type": media})
            await response.prepare(request)
            for start in range(0, len(payload), 7):
                await response.write(payload[start : start + 7])
            await response.write_eof()
            return response

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)

    async def close_session(_: web.Application) -> None:
        await session.close()

    app.on_cleanup.append(close_session)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    return runner, f"http://127.0.0.1:{port}"


@pytest.mark.parametrize("profile_name", ["openai", "friendli"])
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_valid_framing_is_never_flagged(mock: EmbeddedMock, variant: str, profile_name: str
                                        ) -> None:
    upstream = mock.openai_url.rsplit("/v1", 1)[0]
    base_path = "/dedicated/v1" if profile_name == "friendli" else "/v1"

    async def main() -> dict[str, str]:
        runner, url = await proxy(upstream, VARIANTS[variant])
        try:
            settings = settings_for(url + base_path, profile_name)
            result = await execute(settings, CATALOG.select(profile=settings.profile))
        finally:
            await runner.cleanup()
        streams = [e for e in result.exchanges.values() if e.is_sse and e.status == 200]
        assert streams and all(e.events for e in streams)
        assert all(SIGNS[variant] in e.body for e in streams)
        return not_passing(result)

    assert asyncio.run(main()) == {}


def test_the_rewrites_really_change_the_bytes() -> None:
    sample = b'data: {"id":"cmpl-1","object":"text_completion"}\n\ndata: [DONE]\n\n'
    for name, rewrite in VARIANTS.items():
        assert rewrite(sample) != sample, name
    assert b'data: {"id":"cmpl-1",\ndata: "object"' in split_json_lines(sample)
