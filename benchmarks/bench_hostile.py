"""The mock under a hostile mix (issue 13): /health latency, 5xx, RSS and SIGTERM stop time.

    python benchmarks/bench_hostile.py [--json FILE] [--probe-ms 10]

Starts ``mockserver --port 0`` as a child process and sends, one class at a time, each
request at the documented limits (``mockserver/README.md``, "Hostile and careless clients"):
prompts just under ``--max-prompt-chars``, a million-character prompt, 200 prompts of 5,000
spaces, echo + logprobs with ``max_tokens: 0`` on 150 prompts of ~1,000 tokens, 100,000
prompts (abandoned by the client), a 1 GB gzip bomb, a body that is not gzip, JSON nested
500 deep, clients leaving mid-body, garbage HTTP, clients that send headers and then nothing,
and rotating Bearer tokens. Meanwhile ``GET /health`` is probed every ``--probe-ms`` on its
own connection; its latency p50 / p99 / max is reported per class and overall. RSS is read
from /proc before the mix (after a warm-up) and after it; then a 100,000-prompt request is
sent and the server is sent SIGTERM: the time to exit is the stop time.

The goals (issue 13, "Done when"): no 5xx, ``/health`` p99 < 50 ms throughout, RSS back
within 20 MB of its start, SIGTERM stop < 5 s. The probe shares the machine's cores with the
server and the senders, so its numbers are an upper bound of what a separate client sees.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import http.client
import json
import multiprocessing
import os
import re
import signal
import statistics
import subprocess
import sys
import time
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

MODEL = "reference-ngram"
READY = re.compile(r"http://127\.0\.0\.1:(\d+)/v1")


@dataclass
class Phase:
    name: str
    statuses: list[int] = field(default_factory=list)
    health_ms: list[float] = field(default_factory=list)
    seconds: float = 0.0
    rss_mb: float = 0.0
    cpu_s: float = 0.0

    def summary(self) -> dict[str, Any]:
        lat = sorted(self.health_ms)
        return {
            "class": self.name,
            "statuses": sorted(set(self.statuses)),
            "server_errors": sum(1 for s in self.statuses if s >= 500 and s != 503),
            "health_probes": len(lat),
            "health_p50_ms": round(statistics.median(lat), 2) if lat else None,
            "health_p99_ms": round(_pct(lat, 0.99), 2) if lat else None,
            "health_max_ms": round(lat[-1], 2) if lat else None,
            "seconds": round(self.seconds, 2),
            "rss_after_mb": round(self.rss_mb, 1),
            "server_cpu_s": round(self.cpu_s, 2),
        }


def _pct(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))]


# -- raw HTTP -----------------------------------------------------------------------------


def _head(length: int, *extra: str, path: str = "/v1/completions") -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: bench", "Content-Type: application/json",
             f"Content-Length: {length}", "Connection: close", *extra]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def _exchange(port: int, data: bytes, *, read: bool = True, timeout: float = 60.0) -> int:
    """Send ``data``; return the status of the answer (0: none, the connection closed)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        await writer.drain()
        if not read:
            return 0
        line = await asyncio.wait_for(reader.readline(), timeout)
        await asyncio.wait_for(reader.read(), timeout)  # the rest, until the server closes
        parts = line.split()
        return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    except (ConnectionError, asyncio.IncompleteReadError):
        return 0
    finally:
        writer.close()
        try:
            await writer.wait_closed()
        except (ConnectionError, OSError):
            pass


async def _post_json(port: int, body: object, *extra: str) -> int:
    payload = json.dumps(body).encode()
    return await _exchange(port, _head(len(payload), *extra) + payload)


# -- the hostile classes --------------------------------------------------------------------

Sender = Callable[[int], Awaitable[list[int]]]


async def prompt_at_char_limit(port: int) -> list[int]:
    return [await _post_json(port, {"model": MODEL, "prompt": "The cat sat. " * 7_692,
                                    "max_tokens": 1})]


async def million_char_prompt(port: int) -> list[int]:
    return [await _post_json(port, {"model": MODEL, "prompt": "a" * 1_000_000})]


async def spaces_prompts(port: int) -> list[int]:
    return [await _post_json(port, {"model": MODEL, "prompt": [" " * 5_000] * 200,
                                    "max_tokens": 1})]


async def echo_scoring(port: int) -> list[int]:
    prompt = " ".join(["word"] * 1_000)
    return [await _post_json(port, {"model": MODEL, "prompt": [prompt] * 150, "echo": True,
                                    "logprobs": 5, "max_tokens": 0})]


async def many_prompts_abandoned(port: int) -> list[int]:
    payload = json.dumps({"model": MODEL, "prompt": ["a"] * 100_000, "max_tokens": 16}).encode()
    _, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(_head(len(payload)) + payload)
    await writer.drain()
    await asyncio.sleep(2.0)  # the server is working on it
    writer.close()
    await asyncio.sleep(1.0)  # it must notice and stop
    return []


def _bomb() -> bytes:
    """1 GiB of zeros, gzipped (about 1 MB), made once before the mix."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = b"\0" * (1 << 20)
    return b"".join(compressor.compress(chunk) for _ in range(1024)) + compressor.flush()


BOMB: list[bytes] = []


async def gzip_bomb(port: int) -> list[int]:
    """The server answers 413 and closes while the bomb is still being sent: read meanwhile."""
    bomb = BOMB[0]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(_head(len(bomb), "Content-Encoding: gzip"))
    sending = asyncio.ensure_future(_send_all(writer, bomb))
    try:
        line = await asyncio.wait_for(reader.readline(), 30)
    finally:
        sending.cancel()
        writer.close()
    parts = line.split()
    return [int(parts[1])] if len(parts) > 1 else [0]


async def _send_all(writer: asyncio.StreamWriter, data: bytes) -> None:
    try:
        for at in range(0, len(data), 65536):
            writer.write(data[at:at + 65536])
            await writer.drain()
    except (ConnectionError, OSError):
        pass


async def bad_gzip(port: int) -> list[int]:
    body = b'{"model": "x"}'
    return [await _exchange(port, _head(len(body), "Content-Encoding: gzip") + body)]


async def deep_nesting(port: int) -> list[int]:
    nested = '{"a": ' * 500 + "1" + "}" * 500
    deep = f'{{"model": "{MODEL}", "prompt": "Hi", "stream_options": {nested}}}'
    return [await _exchange(port, _head(len(deep)) + deep.encode())]


async def gone_mid_body(port: int) -> list[int]:
    for _ in range(50):
        await _exchange(port, _head(1000) + b'{"model"', read=False)
    return []


async def garbage_http(port: int) -> list[int]:
    statuses = []
    for garbage in (b"GET / HTTP/1.1\r\nBad Header\r\n\r\n", b"\x16\x03\x01\x02\x00\x01\x00",
                    b"POST /v1/completions HTTP/1.1\r\nContent-Length: -1\r\n\r\n") * 10:
        statuses.append(await _exchange(port, garbage, timeout=5))
    return [s for s in statuses if s]


async def slow_headers(port: int) -> list[int]:
    writers = []
    for _ in range(50):
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"POST /v1/completions HTTP/1.1\r\nHost: bench\r\n")
        writers.append(writer)
    await asyncio.sleep(1.0)
    for writer in writers:
        writer.close()
    return []


async def rotating_tokens(port: int) -> list[int]:
    return [await _post_json(port, {"model": MODEL, "prompt": "Hi", "max_tokens": 1},
                             f"Authorization: Bearer t{i}") for i in range(20)]


CLASSES: list[tuple[str, Sender]] = [
    ("prompt at --max-prompt-chars", prompt_at_char_limit),
    ("1,000,000-char prompt", million_char_prompt),
    ("200 prompts of 5,000 spaces", spaces_prompts),
    ("echo+logprobs, 150 x 1,000 tokens", echo_scoring),
    ("100,000 prompts, abandoned", many_prompts_abandoned),
    ("1 GB gzip bomb", gzip_bomb),
    ("body not gzip", bad_gzip),
    ("JSON nested 500 deep", deep_nesting),
    ("50 clients gone mid-body", gone_mid_body),
    ("30 garbage HTTP requests", garbage_http),
    ("50 clients: headers, then nothing", slow_headers),
    ("20 rotating Bearer tokens", rotating_tokens),
]


# -- probing and the server -----------------------------------------------------------------


def _probe(port: int, every: float, control: Connection) -> None:
    """In its own process (the senders must not delay it): GET /health on one keep-alive
    connection every ``every`` seconds until told to stop; sends back (when, ms) pairs."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    samples: list[tuple[float, float]] = []
    while not control.poll():
        started = time.perf_counter()
        connection.request("GET", "/health")
        response = connection.getresponse()
        response.read()
        assert response.status == 200, response.status
        samples.append((time.time(), (time.perf_counter() - started) * 1000.0))
        time.sleep(every)
    control.send(samples)


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def _cpu_s(pid: int) -> float:
    """The server's user + system CPU seconds so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _start(*args: str) -> tuple[subprocess.Popen[str], int]:
    process = subprocess.Popen([sys.executable, "-m", "mockserver", "--port", "0", *args],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    match = READY.search(process.stdout.readline())
    if not match:
        process.kill()
        raise SystemExit("mockserver printed no ready line")
    return process, int(match[1])


async def _mix(port: int, every: float, pid: int) -> list[Phase]:
    phases = []
    here, there = multiprocessing.get_context("fork").Pipe()
    prober = multiprocessing.get_context("fork").Process(target=_probe,
                                                          args=(port, every, there))
    prober.start()
    spans = []
    for name, sender in CLASSES:
        phase = Phase(name)
        started, wall, cpu = time.perf_counter(), time.time(), _cpu_s(pid)
        phase.statuses = await sender(port)
        await asyncio.sleep(0.5)  # work the server does after answering counts too
        phase.seconds = time.perf_counter() - started
        phase.cpu_s = _cpu_s(pid) - cpu
        spans.append((wall, time.time()))
        phase.rss_mb = _rss_mb(pid)
        phases.append(phase)
    here.send("stop")
    samples = here.recv()
    prober.join()
    for phase, (begin, end) in zip(phases, spans, strict=True):
        phase.health_ms = [ms for when, ms in samples if begin <= when - ms / 1000.0 < end]
    return phases


async def _stop_time(process: subprocess.Popen[str], port: int) -> float:
    payload = json.dumps({"model": MODEL, "prompt": ["a"] * 100_000, "max_tokens": 16}).encode()
    _, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(_head(len(payload)) + payload)
    await writer.drain()
    await asyncio.sleep(1.0)
    started = time.perf_counter()
    process.send_signal(signal.SIGTERM)
    while process.poll() is None:
        await asyncio.sleep(0.01)
        if time.perf_counter() - started > 30:
            process.kill()
            break
    writer.close()
    return time.perf_counter() - started


async def _warm_up(port: int) -> None:
    for _ in range(20):
        await _post_json(port, {"model": MODEL, "prompt": "Hello", "max_tokens": 8})
    await _post_json(port, {"model": MODEL, "prompt": ["Hello there"] * 40, "max_tokens": 8})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--probe-ms", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=2,
                        help="times the mix is run (RSS after each shows whether it grows)")
    args = parser.parse_args()
    BOMB.append(_bomb())
    process, port = _start("--rate-limit-rpm", "1000")
    try:
        asyncio.run(_warm_up(port))
        time.sleep(0.5)
        rss_before = _rss_mb(process.pid)
        phases: list[Phase] = []
        rss_rounds = []
        for _ in range(args.rounds):
            phases += asyncio.run(_mix(port, args.probe_ms / 1000.0, process.pid))
            time.sleep(1.0)
            rss_rounds.append(round(_rss_mb(process.pid), 1))
        rss_after = rss_rounds[-1]
        stop_seconds = asyncio.run(_stop_time(process, port))
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
    gc.collect()
    every = sorted(ms for phase in phases for ms in phase.health_ms)
    result = {
        "classes": [phase.summary() for phase in phases],
        "server_errors": sum(p.summary()["server_errors"] for p in phases),
        "health_p50_ms": round(statistics.median(every), 2),
        "health_p99_ms": round(_pct(every, 0.99), 2),
        "health_max_ms": round(every[-1], 2),
        "rss_before_mb": round(rss_before, 1),
        "rss_after_mb": round(rss_after, 1),
        "rss_after_each_round_mb": rss_rounds,
        "sigterm_stop_s": round(stop_seconds, 2),
        "exit_code": process.returncode,
    }
    _print(result)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(result, out, indent=2)
    return 0


def _print(result: dict[str, Any]) -> None:
    print(f"{'class':36} {'statuses':14} {'probes':>6} {'p50 ms':>7} {'p99 ms':>7} "
          f"{'max ms':>7} {'s':>6} {'CPU s':>6} {'RSS MB':>7}")
    for row in result["classes"]:
        print(f"{row['class']:36} {','.join(map(str, row['statuses'])) or '-':14} "
              f"{row['health_probes']:>6} {row['health_p50_ms']!s:>7} {row['health_p99_ms']!s:>7} "
              f"{row['health_max_ms']!s:>7} {row['seconds']:>6} {row['server_cpu_s']:>6} "
              f"{row['rss_after_mb']:>7}")
    print(f"/health overall: p50 {result['health_p50_ms']} ms, p99 {result['health_p99_ms']} ms, "
          f"max {result['health_max_ms']} ms; 5xx (other than 503): {result['server_errors']}")
    print(f"RSS: {result['rss_before_mb']} MB before, after each round "
          f"{result['rss_after_each_round_mb']} MB; "
          f"SIGTERM stop: {result['sigterm_stop_s']} s (exit {result['exit_code']})")


if __name__ == "__main__":
    sys.exit(main())
