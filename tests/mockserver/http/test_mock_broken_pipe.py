"""``mockserver --list-faults | head``: a reader that goes away early ends the command quietly."""

from __future__ import annotations

import os
import subprocess
import sys

from procutil.broken_pipe import BROKEN_PIPE_STATUS


def test_list_faults_into_a_closed_pipe_exits_without_a_traceback() -> None:
    """stdout is a pipe whose reader has gone before the first write (a reader closing after
    one line would race a listing that fits the pipe's buffer)."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        done = subprocess.run([sys.executable, "-m", "mockserver", "--list-faults"],
                              stdout=writer, stderr=subprocess.PIPE, text=True, timeout=60,
                              check=False)
    finally:
        os.close(writer)
    assert "Traceback" not in done.stderr
    assert done.stderr == "" and done.returncode == BROKEN_PIPE_STATUS
