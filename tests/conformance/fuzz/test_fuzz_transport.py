"""Every fuzz request under one guard: the budget, backoff on 429 / 503, network failures."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
import requests
import schemathesis

import spec
from conformance.fuzz.transport import (
    GuardedOpenApiSchema,
    RequestBudgetSpent,
    RequestGuard,
    guard_schema,
)
from conformance.transport import Network, to_curl

BODY = {"model": "m", "prompt": "Hi", "max_tokens": 1}


class Scripted(BaseHTTPRequestHandler):
    """Answers each request with the next scripted (status, headers, body); the last repeats."""

    script: ClassVar[list[tuple[int, dict[str, str], bytes]]] = []
    seen: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        Scripted.seen.append(self.path)
        status, headers, body = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        self.send_response(status)
        for name, value in {"Content-Type": "application/json", **headers}.items():
            self.send_header(name, value)
        if "Content-Length" not in headers:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        if "Content-Length" in headers:
            self.close_connection = True

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    Scripted.seen = []
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _send(guard: RequestGuard, base_url: str) -> schemathesis.Response:
    schema = guard_schema(schemathesis.openapi.from_dict(spec.profile_document("openai")), guard)
    assert isinstance(schema, GuardedOpenApiSchema)
    case = schema["/v1/completions"]["POST"].Case(body=BODY, media_type="application/json")
    return case.call(base_url=base_url)


def test_the_budget_counts_attempts_and_stops_the_run() -> None:
    stopped: list[bool] = []
    guard = RequestGuard(max_requests=2, on_spent=lambda: stopped.append(True))
    guard.take()
    guard.take()
    for _ in range(2):
        with pytest.raises(RequestBudgetSpent):
            guard.take()
    assert guard.sent == 2 and guard.spent and stopped == [True]


def test_backoff_honours_retry_after_then_doubles() -> None:
    guard = RequestGuard(max_wait=10.0)
    assert guard.backoff(0, "3") == 3.0
    assert guard.backoff(0, None) == 0.5 and guard.backoff(2, "soon") == 2.0
    assert guard.backoff(0, "60") is None  # longer than max_wait: give up, report the 429


def test_429_and_503_are_retried(server: str) -> None:
    Scripted.script = [(429, {"Retry-After": "2"}, b"{}"), (503, {}, b"{}"), (200, {}, b"{}")]
    slept: list[float] = []
    guard = RequestGuard(sleep=slept.append)
    assert _send(guard, server).status_code == 200
    assert slept == [2.0, 1.0] and guard.sent == 3 and guard.retried == 2


def test_retries_end_with_the_last_answer(server: str) -> None:
    Scripted.script = [(503, {}, b"{}")]
    guard = RequestGuard(retries=2, sleep=lambda _: None)
    assert _send(guard, server).status_code == 503
    assert guard.sent == 3


def test_a_spent_budget_refuses_the_request(server: str) -> None:
    Scripted.script = [(200, {}, b"{}")]
    guard = RequestGuard(max_requests=1)
    _send(guard, server)
    with pytest.raises(RequestBudgetSpent):
        _send(guard, server)
    assert len(Scripted.seen) == 1


def test_a_body_cut_short_is_a_network_failure_with_its_request(server: str) -> None:
    Scripted.script = [(200, {"Content-Length": "100"}, b'{"partial"')]
    guard = RequestGuard(secret_headers=("X-Secret",))
    with pytest.raises(requests.RequestException):
        schema = guard_schema(schemathesis.openapi.from_dict(spec.profile_document("openai")),
                              guard)
        case = schema["/v1/completions"]["POST"].Case(body=BODY, media_type="application/json")
        case.call(base_url=server, headers={"X-Secret": "hush"})
    [failure] = guard.network_failures
    assert failure.connected and failure.operation == "POST /v1/completions"
    assert ("X-Secret", "<redacted>") in failure.request.headers


def test_a_refused_connection_is_not_a_finding() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    guard = RequestGuard()
    with pytest.raises(requests.ConnectionError):
        _send(guard, f"http://127.0.0.1:{port}")
    [failure] = guard.network_failures
    assert not failure.connected


def test_a_network_failure_keeps_the_proxy_it_went_through_redacted() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    guard = RequestGuard(network=Network(proxy=f"http://ci:hush@127.0.0.1:{port}"))
    with pytest.raises(requests.ConnectionError):
        _send(guard, "http://127.0.0.1:9")
    [failure] = guard.network_failures
    assert failure.request.network is not None
    curl = to_curl(failure.request)
    assert curl.startswith('curl -sS --proxy "$PROXY" ') and "hush" not in curl + failure.error
