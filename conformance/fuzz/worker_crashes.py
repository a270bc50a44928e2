"""A schemathesis worker thread that dies is a harness error, never a quiet end of the search.

Schemathesis runs each operation's examples in worker threads; an exception it does not catch
there (once: ``RecursionError`` from ``json.loads`` on a body nested 100,000 deep) printed a
traceback on stderr, ended the thread, and the run went on to report every rule PASS with no
example judged. While a run lasts, :func:`worker_crashes` turns such a death into one line of
the run's errors (which makes a run with no finding exit 2) and keeps the traceback off the
user's terminal.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def worker_crashes(errors: list[str]) -> Iterator[None]:
    """Append one line to ``errors`` for each thread that dies of an uncaught exception while
    the block runs (the previous hook is back after it)."""
    previous = threading.excepthook

    def record(args: threading.ExceptHookArgs) -> None:
        if args.exc_type is SystemExit:
            return
        name = args.thread.name if args.thread is not None else "a thread"
        errors.append(f"harness error: {name} died: {args.exc_type.__name__}: "
                      f"{str(args.exc_value)[:300]}")

    threading.excepthook = record
    try:
        yield
    finally:
        threading.excepthook = previous
