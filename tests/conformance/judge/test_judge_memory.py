"""A day of gateway traffic: a 200 MB HAR is read as a stream, never whole (peak RSS under
300 MB, measured in a child process from its own ``VmHWM``)."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest
from judge_support import STREAM_REQUEST, chunk, clean_events, har_entry, sse

HAR_BYTES = 200 << 20
PEAK_RSS_MB = 300
LONG = 2000
"""Tokens of a long stream (about 400 KB of events)."""
CHILD = """
import io, sys
from conformance.cli import main
code = main(sys.argv[1:], io.StringIO(), io.StringIO())
status = open("/proc/self/status").read()
peak = next(line for line in status.splitlines() if line.startswith("VmHWM:"))
print(code, int(peak.split()[1]) // 1024)
"""


def long_stream(tokens: int) -> list[object]:
    """A clean stream of ``tokens`` chunks (``max_tokens`` as many), ending with ``length``."""
    events: list[object] = [chunk(" word") for _ in range(tokens - 1)]
    events += [chunk(" end", "length"),
               {**chunk(""), "choices": [], "usage": {"prompt_tokens": 2,
                                                      "completion_tokens": tokens,
                                                      "total_tokens": tokens + 2}},
               "[DONE]"]
    return events


def write_day(path: Path, size: int) -> int:
    """A HAR of about ``size`` bytes, written entry by entry: completion streams, short and
    long (~400 KB), between embeddings answers of ~200 KB (another path, counted); the number
    of streams."""
    short = json.dumps(har_entry(STREAM_REQUEST, sse(clean_events())))
    long = json.dumps(har_entry({**STREAM_REQUEST, "max_tokens": LONG},
                                sse(long_stream(LONG))))
    vector = ",".join(["-0.0123456789"] * 14_000)
    embedding = json.dumps(har_entry(
        {"model": "text-embedding-3-small", "input": "hello"},
        json.dumps({"object": "list", "data": [{"embedding": f"[{vector}]"}]}),
        content_type="application/json", url="https://api.openai.com/v1/embeddings"))
    streams = written = 0
    with path.open("w", encoding="utf-8") as out:
        out.write('{"log": {"version": "1.2", "creator": {"name": "mitmproxy", '
                  '"version": "11"}, "entries": [')
        for number in itertools.count():
            if written >= size:
                break
            pieces = (embedding, long, *[short] * 4) if number % 2 else (embedding,)
            for piece in pieces:
                out.write(("," if written else "") + piece)
                written += len(piece) + 1
            streams += len(pieces) - 1
        out.write("]}}")
    return streams


@pytest.mark.slow
def test_a_200_mb_har_is_read_as_a_stream(tmp_path: Path) -> None:
    har = tmp_path / "day.har"
    streams = write_day(har, HAR_BYTES)
    assert har.stat().st_size >= HAR_BYTES
    report = tmp_path / "day.json"
    done = subprocess.run([sys.executable, "-c", CHILD, "judge", "-q", str(har),
                           "--json", str(report)],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    code, peak_mb = map(int, done.stdout.split())
    assert code == 0
    assert peak_mb < PEAK_RSS_MB, f"peak RSS {peak_mb} MB"
    judged = json.loads(report.read_text())
    sse_done = next(r for r in judged["results"] if r["rule"] == "SSE-005")
    assert sse_done["message"] == f"{streams} recorded exchanges judged"
