"""No server can exhaust the harness (issue 39): ``conformance run --json`` and ``conformance
fuzz --json`` against each hostile server of ``hostile_servers.py`` end in bounded memory, time
and report size, with a verdict (exit 0 or 1) or one line (exit 2), and never a Python
traceback; the fuzz runs, longer, are in the slow stage.

Each run is the real CLI in a fresh interpreter, so its peak RSS is its own; the server runs
in this process. The bounds are the issue's: peak RSS under 300 MB, a report under 5 MB.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hostile_servers import BEHAVIOURS, serving

MIB = 1 << 20
MAX_RSS = 300 * MIB
MAX_REPORT = 5 * MIB
TIMEOUT = "3"
"""--timeout of each run: a request that drips or hangs ends within it."""
TIMEOUTS = {"content-length-lie": "1"}
"""Behaviours each of whose requests waits out the whole ``--timeout``: the status line came,
so it is an answer and never "the server stopped answering"; a run of ~60 requests at
``--concurrency`` 4 takes ~15 timeouts (45 s at 3 s, 15 s at 1 s: the bounds are the same)."""

RUN = """
import io, json, sys, time
from conformance.cli import main
out, err = io.StringIO(), io.StringIO()
started = time.perf_counter()
status = main(sys.argv[1:], out, err)
peak = next(int(line.split()[1]) for line in open("/proc/self/status")
            if line.startswith("VmHWM:"))
print(json.dumps({"status": status, "err": err.getvalue(), "out": out.getvalue()[-4000:],
                  "elapsed": time.perf_counter() - started, "peak_kib": peak}))
"""


FUZZ = ("--max-examples", "5", "--time-budget", "6", "--seed", "1")
"""A small fuzz run: its phases within six seconds (the slow stage has 12 of them, and CI's
15 minutes). Enough: the first greedy request and the first streams are where memory peaks and
where a hostile body meets each reader (peaks are per stream, not per example)."""


def run_against(url: str, report: Path, command: str = "run", *flags: str,
                timeout: str = TIMEOUT) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", RUN, command, "--base-url", url, "--timeout", timeout, "-q",
         "--json", str(report), *flags],
        capture_output=True, text=True, timeout=240, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]  # a worker thread's, say
    return json.loads(done.stdout.strip().splitlines()[-1])


def bounded_report(behaviour: str, report: Path, command: str = "run",
                   *flags: str) -> dict | None:
    """``command`` against ``behaviour``, held to the bounds every run must keep (time, no
    traceback, peak RSS, one line on exit 2, report size); the report, or None on exit 2."""
    started = time.perf_counter()
    with serving(behaviour) as url:
        outcome = run_against(url, report, command, *flags,
                              timeout=TIMEOUTS.get(behaviour, TIMEOUT))
    assert time.perf_counter() - started < 180, outcome  # loose: a hang, not a speed target
    assert "Traceback" not in outcome["err"] + outcome["out"], outcome
    assert outcome["peak_kib"] * 1024 < MAX_RSS, outcome
    if outcome["status"] == 2:
        assert len(outcome["err"].splitlines()) == 1, outcome
        return None
    assert outcome["status"] in (0, 1), outcome
    assert report.stat().st_size < MAX_REPORT, report.stat().st_size
    return json.loads(report.read_text())


@pytest.mark.parametrize("behaviour", sorted(BEHAVIOURS))
def test_a_hostile_server_ends_in_bounded_memory_time_and_report(
    behaviour: str, tmp_path: Path
) -> None:
    data = bounded_report(behaviour, tmp_path / "report.json")
    if data is None:
        return
    verdicts = {item["rule"]: item for item in data["results"]}
    harness = [rule for rule, item in verdicts.items()
               if item["verdict"] == "ERROR" and item["message"].startswith("harness error")]
    assert not harness, {rule: verdicts[rule]["message"] for rule in harness}


@pytest.mark.slow
@pytest.mark.parametrize("behaviour", sorted(BEHAVIOURS))
def test_fuzzing_a_hostile_server_ends_in_bounded_memory_time_and_report(
    behaviour: str, tmp_path: Path
) -> None:
    data = bounded_report(behaviour, tmp_path / "fuzz.json", "fuzz", *FUZZ)
    if data is None:
        return
    assert not data["search"]["errors"], data["search"]["errors"]
    passed = [item["rule"] for item in data["results"] if item["verdict"] == "PASS"]
    assert len(passed) < len(data["results"]), "a hostile server passed every rule"
