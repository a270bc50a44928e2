"""Benchmark of the mock server on loopback (a script, not a test).

    python benchmarks/bench_mock.py [--workers N] [--duration S] [--skip-10k]

Measures, in one run:

1. a bare aiohttp hello-world (same worker count) under ``wrk`` with 64 connections: the
   baseline requests/s;
2. the mock's non-streamed ``POST /v1/completions`` (``max_tokens`` 16, temperature 0.8)
   under the same load: requests/s and p50 / p99 latency, twice: sampled, a distinct seed per
   request (every request runs the engine), and cached, one seed for all (repeats are answered
   from the mock's result cache, so this measures the mock without the engine);
3. streamed tokens/s with 256 concurrent streams (``min_tokens`` = ``max_tokens`` so every
   stream carries exactly that many tokens), sampled and cached, with the mock's peak RSS
   per worker. Streams/s come from Little's law (connections / mean stream time), which is
   exact in this closed loop and free of the end-of-run truncation of completed counts;
4. 1,000 concurrent open streams (a long simulated time to first token keeps them open):
   peak RSS per worker;
5. 10,000 concurrent slow streams (TTFT 15 s): how many completed without an error.

``wrk`` (Debian package ``wrk``) is the load generator when installed; otherwise an aiohttp
client loop does the same job (slower: it shares the two cores with the server). Results are
printed as a table and as JSON (``--json``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

MODEL = "reference-ngram"
READY = re.compile(r"http://127\.0\.0\.1:(\d+)/v1")
NON_STREAM_BODY = {"model": MODEL, "prompt": "The Python language", "max_tokens": 16,
                   "temperature": 0.8}
STREAM_TOKENS = 64
STREAM_BODY = {"model": MODEL, "prompt": "The Python language", "max_tokens": STREAM_TOKENS,
               "temperature": 0.8,
               "min_tokens": STREAM_TOKENS, "stream": True}
SLOW_BODY = {"model": MODEL, "prompt": "Hi", "max_tokens": 2, "stream": True}

HELLO_SERVER = """
import os, sys
from aiohttp import web

async def hello(request):
    await request.read()
    return web.json_response({"hello": "world"})

app = web.Application()
app.router.add_post("/v1/completions", hello)
port, workers = int(sys.argv[1]), int(sys.argv[2])
for _ in range(workers - 1):
    if os.fork() == 0:
        break
web.run_app(app, host="127.0.0.1", port=port, reuse_port=True, access_log=None,
            print=lambda *a: print("ready", flush=True))
"""


@dataclass
class LoadResult:
    requests_per_s: float
    p50_ms: float
    p99_ms: float
    mean_ms: float = 0.0
    errors: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


# -- servers ------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def hello_server(workers: int) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen([sys.executable, "-c", HELLO_SERVER, str(port), str(workers)],
                               stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert process.stdout is not None
        for _ in range(workers):
            process.stdout.readline()
        time.sleep(0.3)
        yield f"http://127.0.0.1:{port}"
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)
        if process.stdout:
            process.stdout.close()


@contextlib.contextmanager
def mock_server(workers: int, *flags: str) -> Iterator[tuple[str, list[int]]]:
    """The mock CLI as a subprocess; yields its URL and the pids that serve (the workers)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "mockserver", "--port", "0", "--workers", str(workers),
         "--worker-backend", "fork", *flags],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert process.stdout is not None
        match = READY.search(process.stdout.readline())
        if not match:
            raise RuntimeError("the mock did not start")
        pids = children(process.pid) if workers > 1 else [process.pid]
        yield f"http://127.0.0.1:{match.group(1)}", pids
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        if process.stdout:
            process.stdout.close()


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    if path.exists():
        return [int(p) for p in path.read_text().split()]
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                found.append(int(stat.parent.name))
    return found


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class RssSampler:
    """Peak RSS per process, sampled every 100 ms in a thread."""

    def __init__(self, pids: list[int]) -> None:
        self.pids = pids
        self.peak = dict.fromkeys(pids, 0.0)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            for pid in self.pids:
                with contextlib.suppress(OSError):
                    self.peak[pid] = max(self.peak[pid], rss_mb(pid))
            self._stop.wait(0.1)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def max_per_worker(self) -> float:
        return max(self.peak.values())


# -- load generators ----------------------------------------------------------------------


SEEDED_REQUESTS = """
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end
function request()
  counter = (counter or 0) + 1
  return wrk.format(nil, nil, nil, prefix .. (id * 1000000000 + counter) .. "}")
end
"""
"""wrk's Lua for a distinct seed per request: each thread numbers its own requests."""


def wrk(url: str, body: dict[str, Any], *, connections: int, duration: int,
        fresh_seeds: bool = False) -> LoadResult:
    script = (
        'wrk.method = "POST"\n'
        f"wrk.body = {json.dumps(json.dumps(body))}\n"
        'wrk.headers["Content-Type"] = "application/json"\n'
    )
    if fresh_seeds:
        prefix = json.dumps(body)[:-1] + ', "seed": '
        script += f"prefix = {json.dumps(prefix)}\n" + SEEDED_REQUESTS
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as handle:
        handle.write(script)
    try:
        out = subprocess.run(
            ["wrk", "-t", "2", "-c", str(connections), "-d", f"{duration}s", "--latency",
             "--timeout", "30s", "-s", handle.name, f"{url}/v1/completions"],
            capture_output=True, text=True, check=True,
        ).stdout
    finally:
        os.unlink(handle.name)
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    percentiles = {m.group(1): _ms(m.group(2)) for m in
                   re.finditer(r"^\s+(50|99)%\s+([\d.]+\w+)", out, re.MULTILINE)}
    errors = sum(int(n) for n in re.findall(r"(?:connect|read|write|timeout) (\d+)", out))
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors += int(non_2xx.group(1)) if non_2xx else 0
    mean = _ms(re.search(r"Latency\s+([\d.]+\w+)", out).group(1))  # type: ignore[union-attr]
    return LoadResult(rate, percentiles.get("50", 0.0), percentiles.get("99", 0.0), mean, errors)


def _ms(value: str) -> float:
    number, unit = re.match(r"([\d.]+)(\w+)", value).groups()  # type: ignore[union-attr]
    return float(number) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}[unit]


async def _client_load(url: str, body: dict[str, Any], connections: int,
                       duration: float, fresh_seeds: bool) -> LoadResult:
    latencies: list[float] = []
    errors = 0
    seeds = iter(range(1, 1 << 62))
    deadline = time.monotonic() + duration
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        async def worker() -> None:
            nonlocal errors
            while time.monotonic() < deadline:
                start = time.monotonic()
                sent = {**body, "seed": next(seeds)} if fresh_seeds else body
                async with session.post(f"{url}/v1/completions", json=sent) as response:
                    await response.read()
                    if response.status != 200:
                        errors += 1
                latencies.append((time.monotonic() - start) * 1000)

        await asyncio.gather(*(worker() for _ in range(connections)))
    latencies.sort()
    return LoadResult(len(latencies) / duration, statistics.median(latencies),
                      latencies[int(len(latencies) * 0.99) - 1], statistics.mean(latencies),
                      errors)


def load(url: str, body: dict[str, Any], *, connections: int, duration: int,
         fresh_seeds: bool = False) -> LoadResult:
    """``body`` under load; ``fresh_seeds``: each request with a seed of its own."""
    if shutil.which("wrk"):
        return wrk(url, body, connections=connections, duration=duration,
                   fresh_seeds=fresh_seeds)
    return asyncio.run(_client_load(url, body, connections, duration, fresh_seeds))


async def _concurrent_streams(url: str, count: int, timeout: float) -> tuple[int, int]:
    """Open ``count`` streams at once; return (completed with [DONE], failed)."""
    done = failed = 0
    connector = aiohttp.TCPConnector(limit=0, force_close=True)
    client_timeout = aiohttp.ClientTimeout(total=timeout)
    async with aiohttp.ClientSession(connector=connector, timeout=client_timeout) as session:
        async def one() -> None:
            nonlocal done, failed
            try:
                async with session.post(f"{url}/v1/completions", json=SLOW_BODY) as response:
                    data = await response.read()
                if response.status == 200 and data.endswith(b"data: [DONE]\n\n"):
                    done += 1
                else:
                    failed += 1
            except (aiohttp.ClientError, asyncio.TimeoutError, OSError):
                failed += 1

        await asyncio.gather(*(one() for _ in range(count)))
    return done, failed


# -- the run ------------------------------------------------------------------------------


def run(workers: int, duration: int, skip_10k: bool) -> dict[str, Any]:
    results: dict[str, Any] = {"workers": workers, "duration_s": duration,
                               "load_generator": "wrk" if shutil.which("wrk") else "aiohttp"}
    with hello_server(workers) as url:
        load(url, NON_STREAM_BODY, connections=64, duration=1)  # warm-up
        results["baseline"] = load(url, NON_STREAM_BODY, connections=64, duration=duration)
    with mock_server(workers) as (url, pids):
        load(url, NON_STREAM_BODY, connections=64, duration=1, fresh_seeds=True)
        results["non_stream"] = load(url, NON_STREAM_BODY, connections=64, duration=duration,
                                     fresh_seeds=True)
        results["non_stream_cached"] = load(url, {**NON_STREAM_BODY, "seed": 1}, connections=64,
                                            duration=duration)
        for name, stream_body, fresh in (("stream", STREAM_BODY, True),
                                         ("stream_cached", {**STREAM_BODY, "seed": 1}, False)):
            with RssSampler(pids) as rss:
                stream = load(url, stream_body, connections=256, duration=duration,
                              fresh_seeds=fresh)
            streams_per_s = 256 / (stream.mean_ms / 1000) if stream.mean_ms else 0.0
            stream.extra["tokens_per_s"] = streams_per_s * STREAM_TOKENS
            stream.extra["peak_rss_mb_per_worker"] = rss.max_per_worker
            results[name] = stream
    with mock_server(workers, "--ttft-ms", "4000") as (url, pids), RssSampler(pids) as rss:
        done, failed = asyncio.run(_concurrent_streams(url, 1000, timeout=60))
        results["streams_1000"] = {"completed": done, "failed": failed,
                                   "peak_rss_mb_per_worker": rss.max_per_worker}
    if not skip_10k:
        with mock_server(workers, "--ttft-ms", "15000") as (url, pids), RssSampler(pids) as rss:
            started = time.monotonic()
            done, failed = asyncio.run(_concurrent_streams(url, 10_000, timeout=120))
            results["streams_10000"] = {"completed": done, "failed": failed,
                                        "seconds": round(time.monotonic() - started, 1),
                                        "peak_rss_mb_per_worker": rss.max_per_worker}
    return results


def report(results: dict[str, Any]) -> str:
    base = results["baseline"]
    lines = [
        f"workers: {results['workers']}  load generator: {results['load_generator']}  "
        f"duration: {results['duration_s']} s per load",
        f"baseline hello-world        {base.requests_per_s:9.0f} req/s  "
        f"p50 {base.p50_ms:7.2f} ms  p99 {base.p99_ms:7.2f} ms",
    ]
    for name, label in (("non_stream", "non-streamed, sampled"),
                        ("non_stream_cached", "non-streamed, cached")):
        plain = results[name]
        lines.append(
            f"{label:<27} {plain.requests_per_s:9.0f} req/s  p50 {plain.p50_ms:7.2f} ms  "
            f"p99 {plain.p99_ms:7.2f} ms  = {plain.requests_per_s / base.requests_per_s:.0%} "
            f"of baseline  errors {plain.errors}")
    for name, label in (("stream", "256 streams, sampled"), ("stream_cached",
                                                              "256 streams, cached")):
        stream = results[name]
        lines.append(
            f"{label:<27} {stream.extra['tokens_per_s']:9.0f} tokens/s  "
            f"p50 {stream.p50_ms:.1f} ms  p99 {stream.p99_ms:.1f} ms  errors {stream.errors}  "
            f"peak RSS {stream.extra['peak_rss_mb_per_worker']:.0f} MB/worker")
    s1k = results["streams_1000"]
    lines.append(f"1,000 open streams          {s1k['completed']} completed, "
                 f"{s1k['failed']} failed,"
                 f" peak RSS {s1k['peak_rss_mb_per_worker']:.0f} MB/worker")
    if "streams_10000" in results:
        s10k = results["streams_10000"]
        lines.append(f"10,000 slow streams         {s10k['completed']} completed, "
                     f"{s10k['failed']} failed in {s10k['seconds']} s, peak RSS "
                     f"{s10k['peak_rss_mb_per_worker']:.0f} MB/worker")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--duration", type=int, default=10, help="seconds per load (default 10)")
    parser.add_argument("--skip-10k", action="store_true", help="skip the 10,000-stream run")
    parser.add_argument("--json", action="store_true", help="print the results as JSON too")
    args = parser.parse_args()
    results = run(args.workers, args.duration, args.skip_10k)
    print(report(results))
    if args.json:
        print(json.dumps(results, default=lambda o: o.__dict__, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
