"""Hostile servers end in a verdict within the configured limits, in bounded memory.

Each raw loopback server answers every request the same hostile way: an endless stream, a
100 MB line, a slow drip that never ends, invalid UTF-8, a stream whose connection is never
closed. The SSE rules must reach a verdict (FAIL, not a hang or an exception) within the
limits, with the harness's memory bounded by them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from harness_support import peak_rss_kib, settings_for
from raw_server import read_request, serve_raw

from conformance.model import RunResult
from conformance.rules import CATALOG
from conformance.run.runner import execute
from conformance.run.settings import default_limits

MIB = 1 << 20
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
CHUNK = (
    b'data: {"id":"c","object":"text_completion","created":1,"model":"m",'
    b'"choices":[{"index":0,"text":"x","logprobs":null,"finish_reason":null}]}\n\n'
)
LIMITS = dataclasses.replace(
    default_limits(3.0), idle_timeout=1.0, max_line_bytes=MIB, max_event_bytes=2 * MIB
)
"""The harness's default limits (bytes, events), with short times."""
Writer = Callable[[asyncio.StreamWriter], Awaitable[None]]


async def endless(writer: asyncio.StreamWriter) -> None:
    while True:
        writer.write(CHUNK * 64)
        await writer.drain()


async def long_line(writer: asyncio.StreamWriter) -> None:
    writer.write(b"data: ")
    block = b"a" * 65536
    for _ in range(100 * MIB // len(block)):
        writer.write(block)
        await writer.drain()
    writer.write(b"\n\n")


async def drip(writer: asyncio.StreamWriter) -> None:
    while True:
        writer.write(b":")
        await writer.drain()
        await asyncio.sleep(0.2)


async def invalid_utf8(writer: asyncio.StreamWriter) -> None:
    writer.write(CHUNK.replace(b'"text":"x"', b'"text":"\xff\xfe"') + b"data: [DONE]\n\n")
    await writer.drain()
    writer.close()


async def never_closed(writer: asyncio.StreamWriter) -> None:
    writer.write(CHUNK + CHUNK.replace(b"null}]", b'"length"}]') + b"data: [DONE]\n\n")
    await writer.drain()
    await asyncio.sleep(3600)


CASES: dict[str, tuple[Writer, str]] = {
    "endless-stream": (endless, "SSE-009"),
    "100-mb-line": (long_line, "SSE-009"),
    "slow-drip": (drip, "SSE-009"),
    "invalid-utf8": (invalid_utf8, "SSE-001"),
    "connection-never-closed": (never_closed, "SSE-009"),
}


async def against(body: Writer) -> RunResult:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(HEAD)
        await body(writer)

    async with serve_raw(handle) as base:
        settings = settings_for(f"{base}/v1", "openai", limits=LIMITS)
        return await execute(settings, CATALOG.select(profile=settings.profile, select=["SSE-*"]))


def measure(case: str) -> None:
    """Run one case in this process and print its verdicts, time and peak RSS as JSON."""
    started = time.perf_counter()
    result = asyncio.run(against(CASES[case][0]))
    print(json.dumps({
        "verdicts": {r.rule.id: r.verdict.value for r in result.results},
        "messages": {r.rule.id: r.message for r in result.results},
        "elapsed": time.perf_counter() - started,
        "max_rss_kib": peak_rss_kib(),
    }))


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_servers_end_in_a_verdict(case: str) -> None:
    """Each case runs in a fresh interpreter so its peak RSS is its own."""
    here, support = str(Path(__file__).parent), str(Path(__file__).parents[1])  # harness_support
    code = f"import sys; sys.path[:0] = [{here!r}, {support!r}]; "
    code += f"import {Path(__file__).stem} as t; "
    code += f"t.measure({case!r})"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=True)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    rule_id = CASES[case][1]
    assert report["verdicts"][rule_id] == "FAIL", report
    assert "ERROR" not in report["verdicts"].values(), report
    assert report["elapsed"] < 3 * LIMITS.total_time, report
    assert report["max_rss_kib"] * 1024 < 200 * MIB, report
