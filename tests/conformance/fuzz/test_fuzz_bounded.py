"""Every fuzz answer is bounded: bytes (a compression bomb, an endless stream), total time (a
dripped body, a flood of ``100 Continue``), and the run by its time budget.

The servers are raw sockets on loopback, each answering every request the same hostile way.
Wall-time bounds are loose: they catch a hang, not a slow machine.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests
from threaded_server import serving_sockets

from conformance.fuzz.adapters import FreshRetryAdapter
from conformance.fuzz.bounded import ResponseTooLarge, ResponseTooSlow, cut_of
from conformance.fuzz.guard import RequestGuard, ServerSilent, TimeBudgetSpent
from conformance.transport import Limits, Termination

REPO = Path(__file__).resolve().parents[3]
Answer = Callable[[socket.socket], None]
MODELS = json.dumps({"object": "list", "data": [
    {"id": "m", "object": "model", "created": 0, "owned_by": "x"}]}).encode()
SSE_EVENT = (b'data: {"id":"c","object":"text_completion","created":1,"model":"m",'
             b'"choices":[{"index":0,"text":"x","logprobs":null,"finish_reason":null}]}\n\n')


def _bomb(expanded: int) -> bytes:
    """A gzip body of ``expanded`` zero bytes (a thousandfold smaller)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(1 << 20)
    return b"".join(packer.compress(block) for _ in range(expanded >> 20)) + packer.flush()


def gzip_bomb(expanded: int = 256 << 20) -> Answer:
    body = _bomb(expanded)

    def answer(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     b"Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    return answer


def drip(content_type: bytes = b"application/json", every: float = 0.2) -> Answer:
    def answer(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: " + content_type
                     + b"\r\nContent-Length: 100000\r\n\r\n")
        while True:
            conn.sendall(b" ")
            time.sleep(every)
    return answer


def continue_flood(conn: socket.socket) -> None:
    while True:
        conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n" * 256)


def endless_stream(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n")
    while True:
        conn.sendall(SSE_EVENT * 64)


def _handle(conn: socket.socket, answer: Answer) -> None:
    head = b""
    while b"\r\n\r\n" not in head:
        data = conn.recv(65536)
        if not data:
            return
        head += data
    header, _, rest = head.partition(b"\r\n\r\n")
    length = next((int(line.split(b":")[1]) for line in header.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    while len(rest) < length:
        rest += conn.recv(65536)
    if b" /v1/models" in header.split(b"\r\n")[0]:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(MODELS) + MODELS)
        return
    answer(conn)


@contextlib.contextmanager
def hostile(answer: Answer) -> Iterator[str]:
    """A loopback server answering GET /v1/models, and everything else with ``answer``;
    yields its base URL (``http://127.0.0.1:PORT/v1``)."""
    with serving_sockets(lambda conn: _handle(conn, answer)) as port:
        yield f"http://127.0.0.1:{port}/v1"


def _session(guard: RequestGuard) -> requests.Session:
    session = requests.Session()
    for prefix in ("http://", "https://"):
        session.mount(prefix, FreshRetryAdapter(guard))
    return session


def _post(base_url: str, guard: RequestGuard) -> requests.Response:
    with _session(guard) as session:
        return session.post(f"{base_url}/completions", json={"model": "m", "prompt": "Hi"},
                            timeout=30)


LIMITS = Limits(total_time=1.0, idle_timeout=1.0, connect_timeout=1.0,
                max_total_bytes=1 << 20)


def test_a_compression_bomb_is_cut_at_the_byte_limit_in_bounded_memory() -> None:
    with hostile(gzip_bomb()) as url:
        tracemalloc.start()
        try:
            with pytest.raises(ResponseTooLarge, match="total-bytes-limit") as raised:
                _post(url, RequestGuard(limits=LIMITS))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert "passed 1 MiB decoded" in str(raised.value)
    assert raised.value.termination is Termination.TOTAL_BYTES_LIMIT
    assert peak < 16 << 20  # the body expands to 256 MiB


@pytest.mark.parametrize("answer, where", [
    (drip(), "the body did not end"),
    (continue_flood, "the status line and headers did not end"),
], ids=["dripped-body", "100-continue-flood"])
def test_an_answer_that_never_ends_is_cut_at_the_total_time(answer: Answer, where: str) -> None:
    with hostile(answer) as url:
        started = time.monotonic()
        with pytest.raises(ResponseTooSlow, match="total-time-limit") as raised:
            _post(url, RequestGuard(limits=LIMITS))
        took = time.monotonic() - started
    assert where in str(raised.value)
    assert 0.9 < took < 10  # one second, however the reads go


def test_an_endless_stream_keeps_its_complete_events_and_names_the_cut() -> None:
    with hostile(endless_stream) as url:
        response = _post(url, RequestGuard(limits=LIMITS))
    assert 0 < len(response.content) <= 1 << 20
    assert response.content.endswith(b"\n\n")  # what was read, to the last whole event
    assert response.raw.read1(len(SSE_EVENT)) == SSE_EVENT  # replayed for schemathesis
    cut = cut_of(response.request)
    assert cut is not None and cut.termination is Termination.TOTAL_BYTES_LIMIT
    assert "total-bytes-limit" in cut.message


def test_the_run_time_budget_cuts_a_request_in_flight_and_stops_the_run() -> None:
    stopped: list[bool] = []
    guard = RequestGuard(limits=Limits(total_time=30.0), time_budget=1.0,
                         on_spent=lambda: stopped.append(True))
    with hostile(drip()) as url:
        started = time.monotonic()
        with pytest.raises(TimeBudgetSpent):
            _post(url, guard)
        assert time.monotonic() - started < 10
    assert guard.spent and guard.stop_reason == "time budget spent" and stopped == [True]
    with pytest.raises(TimeBudgetSpent):
        guard.take()  # and nothing more is sent


def _fuzz_child(url: str, report: Path, *flags: str) -> tuple[subprocess.CompletedProcess[str],
                                                               int]:
    """``conformance fuzz`` in a child process; its result and its peak RSS in KiB (read by
    the child itself: Linux carries a parent's ``ru_maxrss`` over ``exec``)."""
    script = ("import sys\nfrom conformance.cli import main\n"
              "try:\n    code = main(sys.argv[1:])\nfinally:\n"
              "    peak = [l for l in open('/proc/self/status') if l.startswith('VmHWM')]\n"
              "    sys.stderr.write('PEAK ' + peak[0].split()[1] + '\\n')\n"
              "sys.exit(code)\n")
    done = subprocess.run(
        [sys.executable, "-c", script, "fuzz", "--base-url", url, "--max-examples", "5",
         "--seed", "1", "-q", "--json", str(report), *flags],
        capture_output=True, text=True, timeout=300, cwd=REPO)
    peak = int(done.stderr.rsplit("PEAK ", 1)[1].split()[0])
    return done, peak


@pytest.mark.slow
def test_fuzzing_a_compression_bomb_ends_with_a_report_in_bounded_memory(tmp_path: Path
                                                                         ) -> None:
    report = tmp_path / "bomb.json"
    with hostile(gzip_bomb(1 << 30)) as url:
        done, peak = _fuzz_child(url, report, "--phases", "examples,fuzzing")
    assert done.returncode == 1, done.stderr
    assert peak < 400 << 10, peak  # the bomb expands to 1 GiB
    assert report.stat().st_size < 5 << 20
    assert "total-bytes-limit" in report.read_text()


@pytest.mark.slow
@pytest.mark.parametrize("answer", [drip(), drip(b"text/event-stream"), continue_flood],
                         ids=["dripped-json", "dripped-stream", "100-continue-flood"])
def test_fuzzing_a_server_that_never_answers_ends_within_the_time_budget(
        answer: Answer, tmp_path: Path) -> None:
    report = tmp_path / "slow.json"
    started = time.monotonic()
    with hostile(answer) as url:
        done, _ = _fuzz_child(url, report, "--time-budget", "6", "--timeout", "2")
    assert time.monotonic() - started < 60, done.stderr
    if answer is continue_flood:  # no status line ever came: run's one line, nothing judged
        assert done.returncode == 2, done.stderr
        assert "got no answer" in done.stderr and not report.exists()
        return
    assert done.returncode in (0, 1), done.stderr  # a 200 status line came: judged
    data = json.loads(report.read_text())
    # the guard's deadline, or the engine's own (the search's share of the budget) when no
    # request was in flight then: a stream cut at --timeout is judged and the search goes on
    assert data["search"]["stop_reason"] in ("time budget of 6 s spent", "max_time")


def test_three_requests_in_a_row_without_a_whole_answer_stop_the_run() -> None:
    stopped: list[bool] = []
    guard = RequestGuard(limits=Limits(total_time=0.5), on_spent=lambda: stopped.append(True))
    with hostile(drip(every=0.05)) as url:
        for _ in range(3):
            with pytest.raises(ResponseTooSlow):
                _post(url, guard)
    assert guard.spent and stopped == [True]
    assert guard.stop_reason == ("the server stopped answering: 3 requests in a row got no "
                                 "whole answer within --timeout 0.5 s")
    with pytest.raises(ServerSilent):
        guard.take()  # and nothing more is sent


def test_a_whole_answer_ends_a_row_of_silent_requests() -> None:
    guard = RequestGuard(limits=Limits(total_time=0.5))
    with hostile(drip(every=0.05)) as url:
        for _ in range(2):
            with pytest.raises(ResponseTooSlow):
                _post(url, guard)
    with hostile(_whole_json) as url:
        _post(url, guard)
    assert guard.silent == 0 and not guard.spent


def _whole_json(conn: socket.socket) -> None:
    body = b'{"object":"text_completion"}'
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d"
                 b"\r\n\r\n" % len(body) + body)


@pytest.mark.slow
def test_fuzzing_a_dripping_server_without_a_time_budget_stops_when_it_stays_silent(
        tmp_path: Path) -> None:
    report = tmp_path / "silent.json"
    started = time.monotonic()
    with hostile(drip(every=0.5)) as url:
        done, _ = _fuzz_child(url, report, "--timeout", "2")
    assert time.monotonic() - started < 60, done.stderr
    assert done.returncode == 1, done.stderr  # the requests with no whole answer are findings
    data = json.loads(report.read_text())
    assert data["search"]["stop_reason"].startswith("the server stopped answering: 3 requests")
