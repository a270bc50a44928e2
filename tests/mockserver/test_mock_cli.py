"""The ``mockserver`` command: flags, the ready line, clean shutdown, and workers."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from mock_live import MODEL

from mockserver.faults import fault_names
from mockserver.workers import gunicorn_available

READY = re.compile(
    r"^mockserver: serving http://127\.0\.0\.1:(\d+)/v1 "
    r"\(FriendliAI: http://127\.0\.0\.1:\1/dedicated/v1\)$"
)
COMMAND = [sys.executable, "-m", "mockserver"]


@contextmanager
def running(
    *args: str, env: dict[str, str] | None = None
) -> Iterator[tuple[int, subprocess.Popen[str]]]:
    """Start the CLI with ``--port 0``, wait for its ready line, yield (port, process)."""
    process = subprocess.Popen(
        [*COMMAND, "--port", "0", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env={**os.environ, **(env or {})},
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().rstrip("\n")
        match = READY.match(line)
        failed = process.poll() is not None and process.stderr is not None
        assert match, (line, process.stderr.read() if failed and process.stderr else "")
        yield int(match.group(1)), process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=20)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def complete(port: int, headers: dict[str, str] | None = None) -> dict[str, object]:
    payload = json.dumps({"model": MODEL, "prompt": "Hi", "max_tokens": 2}).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/completions", payload,
        {"Content-Type": "application/json", **(headers or {})},
    )
    with urllib.request.urlopen(request, timeout=20) as response:
        return json.loads(response.read())


def test_list_faults() -> None:
    out = subprocess.run([*COMMAND, "--list-faults"], capture_output=True, text=True, check=True)
    assert out.stdout.split() == fault_names()


def test_help_explains_every_flag() -> None:
    out = subprocess.run([*COMMAND, "--help"], capture_output=True, text=True, check=True).stdout
    for flag in ("--host", "--port", "--workers", "--api-key", "--fault", "--ttft-ms", "--itl-ms",
                 "--jitter-ms", "--latency-seed", "--rate-limit-rpm", "--rate-limit-tpm",
                 "--max-body-bytes", "--chaos-every", "--chaos-probability", "--chaos-seed",
                 "--list-faults", "--read-timeout", "--idle-timeout", "--max-prompt-chars",
                 "--request-budget", "--log-format"):
        assert flag in out, flag


def test_unknown_fault_is_a_startup_error() -> None:
    out = subprocess.run([*COMMAND, "--fault", "nope"], capture_output=True, text=True)
    assert out.returncode == 2 and "valid faults:" in out.stderr and "done-missing" in out.stderr


def test_serves_prints_once_and_stops_on_sigint() -> None:
    with running("--api-key", "k1", env={"MOCKSERVER_API_KEYS": "k2"}) as (port, process):
        assert complete(port, {"Authorization": "Bearer k1"})["object"] == "text_completion"
        assert complete(port, {"Authorization": "Bearer k2"})["object"] == "text_completion"
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0
        assert process.stdout is not None and process.stdout.read() == ""


def test_stops_on_sigterm_with_a_server_fault() -> None:
    with running("--fault", "object-wrong") as (port, process):
        assert complete(port)["object"] == "text.completion"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0


@pytest.mark.parametrize(
    "backend",
    ["fork", pytest.param("gunicorn", marks=pytest.mark.skipif(
        not gunicorn_available(), reason="gunicorn (the `workers` extra) is not installed"))],
)
def test_workers_share_the_port(backend: str) -> None:
    with running("--workers", "2", "--worker-backend", backend) as (port, process):
        for _ in range(6):
            assert complete(port)["object"] == "text_completion"
        start = time.monotonic()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0
        assert time.monotonic() - start < 15
