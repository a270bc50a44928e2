"""What the first-contact tests (``target/test_first_contact.py``) and the run-deadline tests
(``client/test_run_deadline.py``) run against: ``conformance`` as a user runs it, and small
servers on loopback that refuse, close or never answer, or a gatekeeper before the mock that
refuses the requests it picks. Shared by two folders, so it lives at their common level (on
``sys.path`` through ``tests/conformance/conftest.py``)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import re
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import ClassVar

import aiohttp
from aiohttp import web
from harness_support import settings_for
from threaded_server import serving, serving_sockets

from conformance.cli import main
from conformance.model import RunResult
from conformance.rules import CATALOG
from conformance.run.runner import execute
from conformance.target.embedded import EmbeddedMock

KEY_ERROR = {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                       "param": None, "code": "invalid_api_key"}}
RATE_ERROR = {"error": {"message": "Rate limit reached", "type": "rate_limit_error",
                        "param": None, "code": "rate_limit_exceeded"}}
MODELS = {"object": "list", "data": [{"id": "reference-ngram", "object": "model",
                                      "created": 0, "owned_by": "test"}]}


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


def one_line(argv: tuple[str, ...], expected: str) -> None:
    """``conformance run ARGV`` ends with exit 2, nothing on stdout and exactly ``expected``
    (``…`` matches any text) as its one line on stderr."""
    status, out, err = cli("run", "-q", *argv)
    assert status == 2, (out, err)
    assert not out
    lines = err.splitlines()
    assert len(lines) == 1, err
    pattern = ".+".join(re.escape(part) for part in expected.split("…"))
    assert re.fullmatch("conformance: error: " + pattern, lines[0]), lines[0]


# -- servers -------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def silent_server() -> Iterator[int]:
    """A port whose kernel accepts connections that nothing ever reads or answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        yield int(sock.getsockname()[1])


@contextlib.contextmanager
def closing_server() -> Iterator[int]:
    """A port that accepts each connection, reads the request and closes without a word."""

    def read_and_close(conn: socket.socket) -> None:
        conn.settimeout(1)
        conn.recv(65536)

    with serving_sockets(read_and_close) as port:
        yield port


class Refusing(BaseHTTPRequestHandler):
    """Answers every request with ``answer`` (status, extra headers, JSON body)."""

    answer: ClassVar[tuple[int, dict[str, str], object]] = (401, {}, KEY_ERROR)
    protocol_version = "HTTP/1.1"

    def _reply(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        status, headers, body = self.answer
        data = json.dumps(body).encode()
        self.send_response(status)
        for name, value in {"Content-Type": "application/json", **headers}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _reply

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def refusing(status: int, body: object, headers: dict[str, str] | None = None) -> Iterator[str]:
    """A server answering every request ``status`` with ``body``; yields its ``/v1`` URL."""
    handler = type("Answer", (Refusing,), {"answer": (status, headers or {}, body)})
    with serving(handler, "/v1") as url:
        yield url


Refuse = Callable[[str, bytes], tuple[int, object] | None]
"""Given a request's path and body: ``(status, JSON body)`` to answer instead of the mock,
``(0, None)`` to close the connection unanswered, None to pass it through."""


@dataclass
class Gatekeeper:
    """A reverse proxy before the mock that refuses the requests ``refuse`` picks."""

    upstream: str
    refuse: Refuse
    refused: int = 0
    delay: Callable[[str], float] | None = None
    """Seconds to wait, given a request's path, before handling it (a slow or silent server)."""
    retry_after: str = "0"
    """The ``Retry-After`` header of each refusal."""

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if self.delay is not None:
            await asyncio.sleep(self.delay(request.path))
        body = await request.read()
        decision = self.refuse(request.path, body)
        if decision is not None:
            self.refused += 1
            status, payload = decision
            if status == 0:
                assert request.transport is not None
                request.transport.close()
                return web.Response()
            return web.json_response(payload, status=status,
                                     headers={"Retry-After": self.retry_after})
        headers = {k: v for k, v in request.headers.items()
                   if k.lower() not in ("host", "content-length")}
        async with aiohttp.ClientSession() as session, session.request(
                request.method, self.upstream + request.path_qs, data=body,
                headers=headers) as upstream:
            response = web.StreamResponse(status=upstream.status, headers={
                k: v for k, v in upstream.headers.items()
                if k.lower() not in ("content-length", "transfer-encoding", "connection")})
            await response.prepare(request)
            async for data in upstream.content.iter_any():
                await response.write(data)
            await response.write_eof()
            return response


@contextlib.contextmanager
def gatekeeper(
    mock: EmbeddedMock, refuse: Refuse, *, delay: Callable[[str], float] | None = None,
    retry_after: str = "0",
) -> Iterator[tuple[str, Gatekeeper]]:
    """The gatekeeper on loopback; yields its ``/v1`` URL. A handler the client gave up on is
    cancelled, and shutting down waits for none (a silent server's handlers sleep for ever)."""
    gate = Gatekeeper(mock.openai_url.rsplit("/v1", 1)[0], refuse, delay=delay,
                      retry_after=retry_after)
    loop = asyncio.new_event_loop()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", gate.handle)
    runner = web.AppRunner(app, access_log=None, handler_cancellation=True,
                           shutdown_timeout=0.1)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    port = runner.addresses[0][1]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}/v1", gate
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.run_until_complete(runner.cleanup())
        loop.close()

def catalog(url: str, profile_name: str = "openai") -> RunResult:
    settings = settings_for(url, profile_name)
    return asyncio.run(execute(settings, CATALOG.select(profile=settings.profile)))
