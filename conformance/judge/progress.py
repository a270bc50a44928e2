"""Progress of a long judging on stderr: a status line redrawn in place on a terminal, a line
every :data:`EVERY` seconds in a log, nothing with ``-q`` (as ``conformance fuzz`` shows its
own, :mod:`conformance.fuzz.progress`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

from conformance.fuzz.progress import CLEAR_TO_EOL

PREFIX = "conformance judge: "
EVERY = 10.0
"""Seconds between two progress lines in a log."""
REDRAW = 0.2
"""Seconds between two redraws of the status line on a terminal."""


class Progress:
    """Says how far the reading got; :meth:`tick` is cheap enough to call per exchange."""

    def __init__(self, err: TextIO, *, quiet: bool = False,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.err, self.quiet, self.clock = err, quiet, clock
        self.tty = not quiet and err.isatty()
        self._last = clock()
        self._drawn = False

    def tick(self, source: str, read: int, judged: int) -> None:
        if self.quiet:
            return
        now = self.clock()
        if now - self._last < (REDRAW if self.tty else EVERY):
            return
        self._last = now
        text = f"{PREFIX}{source}: {read:,} exchanges read, {judged:,} completions judged"
        if self.tty:
            self.err.write("\r" + text + CLEAR_TO_EOL)
            self._drawn = True
        else:
            self.err.write(text + "\n")
        self.err.flush()

    def end(self) -> None:
        self._clear()

    def _clear(self) -> None:
        if self._drawn:
            self.err.write("\r" + CLEAR_TO_EOL)
            self._drawn = False
