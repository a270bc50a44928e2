"""The default run against the embedded mock: under 30 s and 300 MB on the 2-core CI machine."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

MEASURE = """
import io, json, resource, sys, time
sys.path.insert(0, HERE)
from harness_support import peak_rss_kib
from conformance.cli import main
started = time.perf_counter()
status = main(["run", "-q"], io.StringIO(), io.StringIO())
print(json.dumps({
    "status": status,
    "wall": time.perf_counter() - started,
    "harness_mib": peak_rss_kib() / 1024,
    # an upper bound: Linux counts the harness's RSS at the fork in the mock's ru_maxrss
    "mock_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
}))
"""


def test_the_default_run_is_fast_and_small() -> None:
    code = MEASURE.replace("HERE", repr(str(Path(__file__).parents[1])))  # harness_support
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["status"] == 0
    assert report["wall"] < 30
    assert report["harness_mib"] < 300 and report["mock_mib"] < 300, report
