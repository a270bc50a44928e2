"""A command whose reader went away (``conformance list | head``) exits quietly.

Python ignores SIGPIPE, so writing to a pipe whose reader has gone raises ``BrokenPipeError``:
a traceback, and another one when the interpreter flushes stdout on its way out. The Python
documentation's recipe ("Note on SIGPIPE", module :mod:`signal`): catch it at the top, point
stdout at the null device so that the last flush has nowhere to fail, and exit with the status
a shell reports for a process SIGPIPE ended. Both commands' ``main`` is wrapped
in it (``mockserver --list-faults | head`` too).
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import ParamSpec

P = ParamSpec("P")

BROKEN_PIPE_STATUS = 128 + 13
"""What a shell reports for a process ended by SIGPIPE (signal 13), as ``seq 1 100000 | head``
gives under ``set -o pipefail``."""


def quiet_on_broken_pipe(main: Callable[P, int]) -> Callable[P, int]:
    """``main``, exiting with :data:`BROKEN_PIPE_STATUS` and no traceback when stdout's reader
    has gone (stdout is flushed before returning, so that the flush at exit cannot fail)."""

    @functools.wraps(main)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> int:
        try:
            try:
                return main(*args, **kwargs)
            finally:
                sys.stdout.flush()
        except BrokenPipeError:
            _stdout_to_null_device()
            return BROKEN_PIPE_STATUS

    return guarded


def _stdout_to_null_device() -> None:
    try:
        stdout = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # replaced by a stream without a descriptor
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, stdout)
    finally:
        os.close(null)
