"""The ``mockserver`` command under hostile clients: what it logs, and how it stops (issue 13).

The CLI runs as a child process (its logging set up as a user gets it), stderr to a file.
Bounds are generous ceilings, not speed targets (``benchmarks/bench_hostile.py`` measures).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

import pytest
from mock_live import MODEL
from test_mock_cli import READY

from mockserver.workers import gunicorn_available

COMMAND = [sys.executable, "-m", "mockserver", "--port", "0"]
STOP_CEILING = 10.0
"""Seconds SIGTERM may take in a test (the goal, 5 s, is measured by the benchmark)."""


@contextmanager
def running(*args: str) -> Iterator[tuple[int, subprocess.Popen[str], IO[str]]]:
    """The CLI with ``args``; yields (port, process, its stderr file)."""
    with tempfile.TemporaryFile("w+", encoding="utf-8") as stderr:
        process = subprocess.Popen([*COMMAND, *args], stdout=subprocess.PIPE, stderr=stderr,
                                   stdin=subprocess.DEVNULL, text=True,
                                   env={**os.environ, "PYTHONUNBUFFERED": "1"})
        try:
            assert process.stdout is not None
            match = READY.match(process.stdout.readline().rstrip("\n"))
            assert match, _read(stderr)
            yield int(match.group(1)), process, stderr
        finally:
            if process.poll() is None:
                process.kill()
            process.wait(timeout=30)
            if process.stdout is not None:
                process.stdout.close()


def _read(stderr: IO[str]) -> str:
    stderr.flush()
    stderr.seek(0)
    return stderr.read()


def _stop(process: subprocess.Popen[str]) -> float:
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=STOP_CEILING)
    return time.monotonic() - started


def _get(port: int, path: str, headers: dict[str, str] | None = None) -> int:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers=headers or {})
    with urllib.request.urlopen(request, timeout=20) as response:
        response.read()
        return int(response.status)


def _post(port: int, body: object, headers: dict[str, str] | None = None) -> int:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/completions", json.dumps(body).encode(),
        {"Content-Type": "application/json", **(headers or {})})
    with urllib.request.urlopen(request, timeout=20) as response:
        response.read()
        return int(response.status)


def _hostile(port: int) -> None:
    """A client leaving mid-body, and garbage for aiohttp's parser."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: "
                     b"application/json\r\nContent-Length: 1000\r\n\r\n{\"model\"")
        time.sleep(0.2)
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n")
        assert sock.recv(1000).startswith(b"HTTP/1.")


def test_hostile_clients_are_no_errors_and_every_request_has_an_access_line() -> None:
    with running("--log-level", "INFO") as (port, process, stderr):
        _hostile(port)
        assert _post(port, {"model": MODEL, "prompt": "Hi", "max_tokens": 1},
                     {"X-Mock-Fault": "usage-total-wrong"}) == 200
        assert _get(port, "/health") == 200
        _stop(process)
        log = _read(stderr)
    assert "Traceback" not in log and " ERROR " not in log and "this is a bug" not in log, log
    lines = log.splitlines()
    gone = [line for line in lines if "client went away" in line]
    assert len(gone) == 1 and " INFO " in gone[0]
    rejected = [line for line in lines if "rejected a malformed HTTP request" in line]
    assert len(rejected) == 1 and " WARNING " in rejected[0] and "Bad Header" in rejected[0]
    access = [line for line in lines if "mockserver.access" in line]
    assert len(access) == 4, access  # the abandoned, the rejected, the completion, /health
    assert "status=499" in access[0] and "status=400" in access[1]
    assert "method=POST path=/v1/completions status=200" in access[2]
    assert "faults=usage-total-wrong" in access[2] and "duration_ms=" in access[2]
    assert "path=/health status=200" in access[3] and "faults=-" in access[3]


def test_json_logs_are_one_object_per_line() -> None:
    with running("--log-level", "INFO", "--log-format", "json") as (port, process, stderr):
        _hostile(port)
        assert _get(port, "/health") == 200
        _stop(process)
        log = _read(stderr)
    records = [json.loads(line) for line in log.splitlines()]
    health = [r for r in records if r.get("path") == "/health" and r.get("status") == 200]
    assert len(health) == 1 and health[0]["logger"] == "mockserver.access"
    assert {"method", "path", "status", "bytes", "duration_ms", "faults"} <= set(health[0])
    assert any(r["level"] == "WARNING" and "malformed" in r.get("message", "") for r in records)


@pytest.mark.parametrize("log_format", ["text", "json"])
@pytest.mark.parametrize("backend", [
    "fork",
    pytest.param("gunicorn", marks=pytest.mark.skipif(
        not gunicorn_available(), reason="gunicorn is not installed")),
])
def test_workers_write_one_access_line_per_request(backend: str, log_format: str) -> None:
    with running("--workers", "2", "--worker-backend", backend, "--log-level", "INFO",
                 "--log-format", log_format) as (port, process, stderr):
        for _ in range(3):
            assert _get(port, "/health") == 200
        assert _post(port, {"model": MODEL, "prompt": "Hi", "max_tokens": 2}) == 200
        _stop(process)
        log = _read(stderr)
    if log_format == "json":
        records = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
        access = [r for r in records if r.get("logger") == "mockserver.access"]
        assert [r["path"] for r in access].count("/health") == 3, log
        posted = [r for r in access if r["path"] == "/v1/completions"]
        assert len(posted) == 1 and posted[0]["status"] == 200 and posted[0]["bytes"] > 0
    else:
        access = [line for line in log.splitlines() if "mockserver.access" in line]
        assert sum("path=/health status=200" in line for line in access) == 3, log
        assert sum("method=POST path=/v1/completions status=200" in line
                   for line in access) == 1, log


def test_the_default_level_logs_nothing_for_clean_and_careless_clients() -> None:
    with running() as (port, process, stderr):
        _hostile(port)
        assert _get(port, "/health") == 200
        _stop(process)
        log = _read(stderr)
    assert "ERROR" not in log and "Traceback" not in log
    assert "mockserver.access" not in log


@pytest.mark.parametrize("workers", [
    (),
    ("--workers", "2", "--worker-backend", "fork"),
    pytest.param(("--workers", "2", "--worker-backend", "gunicorn"), marks=pytest.mark.skipif(
        not gunicorn_available(), reason="gunicorn is not installed")),
], ids=["one-process", "fork", "gunicorn"])
def test_sigterm_stops_the_server_while_a_huge_request_runs_on_a_thread(
    workers: tuple[str, ...],
) -> None:
    body = json.dumps({"model": MODEL, "prompt": ["a"] * 100_000, "max_tokens": 16}).encode()
    with running(*workers) as (port, process, stderr):
        sock = socket.create_connection(("127.0.0.1", port), timeout=20)
        sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: "
                     b"application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        assert _get(port, "/health") == 200  # answered while the request is being worked on
        time.sleep(0.5)
        _stop(process)  # raises TimeoutExpired past the ceiling
        answer = sock.recv(65536)
        sock.close()
        log = _read(stderr)
    assert process.returncode == 0
    assert answer == b"" or answer.startswith(b"HTTP/1.1 503 "), answer[:200]
    assert "Traceback" not in log, log
