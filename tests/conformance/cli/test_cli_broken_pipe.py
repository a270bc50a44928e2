"""``conformance list | head``: a reader that goes away early ends the command quietly."""

from __future__ import annotations

import os
import subprocess
import sys

from procutil.broken_pipe import BROKEN_PIPE_STATUS


def into_a_closed_pipe(*argv: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -m conformance ARGV`` with stdout a pipe whose reader has already gone.

    Closed before the command writes, not after the reader's first line: the listing is
    smaller than a pipe's buffer, so a reader closing later would race the writer."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        return subprocess.run([sys.executable, "-m", "conformance", *argv], stdout=writer,
                              stderr=subprocess.PIPE, text=True, timeout=60, check=False)
    finally:
        os.close(writer)


def test_list_into_a_closed_pipe_exits_without_a_traceback() -> None:
    done = into_a_closed_pipe("list")
    assert "Traceback" not in done.stderr
    assert "Broken pipe" not in done.stderr  # not reported as a harness error either
    assert done.returncode == BROKEN_PIPE_STATUS, done.stderr


def test_a_profile_listing_into_a_closed_pipe_too() -> None:
    done = into_a_closed_pipe("list", "--profile", "friendli")
    assert done.stderr == "" and done.returncode == BROKEN_PIPE_STATUS
