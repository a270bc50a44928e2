"""Progress of a fuzz run on stderr: one status line redrawn in place on a terminal, one line per
phase in a log, nothing with ``-q``.

The engine keeps a :class:`Tally` (its thread writes it; the requests are the guard's counter,
which every schemathesis worker thread adds to under a lock, so the count is the whole run's)
and tells a :class:`Reporter` when the run begins and ends, when the phase changes and what
else it has to say. The renderers only read the tally:

* :class:`StatusLine` (a terminal) redraws ``\\r`` + the status + clear-to-end-of-line from a
  ticker thread, ten times a second at most and only when the text changed, so the elapsed time
  moves while a slow request holds every worker; messages print above it; a newline ends it.
* :class:`PhaseLines` (a pipe, a CI log) writes one line as each phase ends, with what the
  phase did: a long run's fuzzing phase, which schemathesis restarts until the time budget is
  spent, is one line, not one per restart.
* :class:`Quiet` writes nothing.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, TextIO

PREFIX = "conformance fuzz: "
CLEAR_TO_EOL = "\x1b[K"
TICK = 0.1
"""Seconds between two redraws of the status line, at least (ten a second at most)."""


@dataclass(frozen=True)
class Status:
    """The run's counts at one moment."""

    phase: str
    requests: int
    examples: int
    findings: int
    elapsed: float
    budget: float | None = None


@dataclass
class Tally:
    """What the run has done so far. The engine's thread writes it, a renderer's thread reads
    it: every field is one int or str, replaced whole."""

    requests: Callable[[], int]
    budget: float | None = None
    clock: Callable[[], float] = time.monotonic
    phase: str = "starting"
    examples: int = 0
    findings: int = 0
    started: float = field(default=0.0)

    def __post_init__(self) -> None:
        self.started = self.clock()

    def status(self) -> Status:
        return Status(phase=self.phase, requests=self.requests(), examples=self.examples,
                      findings=self.findings, elapsed=self.clock() - self.started,
                      budget=self.budget)


class Reporter(Protocol):
    """What the engine tells about a run (:func:`conformance.fuzz.campaign.fuzz`)."""

    def begin(self, tally: Tally) -> None:
        """The run starts; ``tally`` holds its counts from now on."""

    def phase(self, name: str) -> None:
        """``tally.phase`` was just set to ``name``, a phase other than the one before."""

    def message(self, text: str) -> None:
        """Something to tell once (the seed, the embedded mock starting, a finding shrinking)."""

    def end(self) -> None:
        """The run is over (also after an error): finish the output."""


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _seconds(elapsed: float, budget: float | None) -> str:
    spent = f"{elapsed:.0f} s"
    return spent if budget is None else f"{spent} of {budget:g} s"


def status_text(status: Status) -> str:
    """The status line: ``fuzzing phase | 812 requests | 700 examples | 37 s of 60 s | 1
    finding``."""
    return " | ".join((f"{status.phase} phase", _plural(status.requests, "request"),
                       _plural(status.examples, "example"),
                       _seconds(status.elapsed, status.budget),
                       _plural(status.findings, "finding")))


def phase_text(start: Status, end: Status) -> str:
    """A phase's line in a log: what it did between ``start`` and ``end``, and where the run
    stands."""
    return (f"{start.phase} phase: {_plural(end.requests - start.requests, 'request')}, "
            f"{_plural(end.examples - start.examples, 'example')}, "
            f"{_plural(end.findings - start.findings, 'new finding')} "
            f"in {end.elapsed - start.elapsed:.1f} s ({_seconds(end.elapsed, end.budget)})")


class Quiet:
    """``-q``: no progress at all."""

    def begin(self, tally: Tally) -> None:
        pass

    def phase(self, name: str) -> None:
        pass

    def message(self, text: str) -> None:
        pass

    def end(self) -> None:
        pass


class PhaseLines:
    """Progress for a log: the messages, and one line per phase with its counts as it ends."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tally: Tally | None = None
        self.current: Status | None = None

    def begin(self, tally: Tally) -> None:
        self.tally = tally

    def phase(self, name: str) -> None:
        self._close_phase()
        if self.tally is not None:
            self.current = self.tally.status()

    def message(self, text: str) -> None:
        self._write(text)

    def end(self) -> None:
        self._close_phase()
        self.tally = None

    def _close_phase(self) -> None:
        if self.current is not None and self.tally is not None:
            self._write(phase_text(self.current, self.tally.status()))
        self.current = None

    def _write(self, text: str) -> None:
        self.stream.write(f"{PREFIX}{text}\n")
        self.stream.flush()


class StatusLine:
    """Progress for a terminal: one status line redrawn in place, messages printed above it."""

    def __init__(self, stream: TextIO, *, tick: float = TICK) -> None:
        self.stream = stream
        self.tick = tick
        self.tally: Tally | None = None
        self.shown = ""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def begin(self, tally: Tally) -> None:
        self.tally = tally
        self.redraw()
        self._stop.clear()
        self._ticker = threading.Thread(target=self._tick, name="fuzz-progress", daemon=True)
        self._ticker.start()

    def phase(self, name: str) -> None:
        self.redraw()

    def message(self, text: str) -> None:
        with self._lock:
            self.stream.write(f"\r{CLEAR_TO_EOL}{PREFIX}{text}\n")
            if self.shown:
                self.stream.write(self.shown)
            self.stream.flush()

    def end(self) -> None:
        if self._ticker is not None:
            self._stop.set()
            self._ticker.join()
            self._ticker = None
        if self.tally is not None:
            self.redraw()
            with self._lock:
                self.stream.write("\n")
                self.stream.flush()
        self.tally, self.shown = None, ""

    def redraw(self) -> None:
        """Draw the tally's status over the line, unless the text is the one shown."""
        if self.tally is None:
            return
        text = status_text(self.tally.status())[: _width(self.stream) - 1]
        with self._lock:
            line = f"\r{text}{CLEAR_TO_EOL}"
            if line == self.shown:
                return
            self.stream.write(line)
            self.stream.flush()
            self.shown = line

    def _tick(self) -> None:
        while not self._stop.wait(self.tick):
            self.redraw()


def _width(stream: TextIO) -> int:
    """The terminal's columns: a longer line would wrap, and ``\\r`` returns to the last row."""
    try:
        return os.get_terminal_size(stream.fileno()).columns or 80
    except (AttributeError, OSError, ValueError):
        return 80


def reporter(stream: TextIO, *, quiet: bool) -> Reporter:
    """The progress ``stream`` can show: a status line on a terminal, lines in a log."""
    if quiet:
        return Quiet()
    if getattr(stream, "isatty", lambda: False)():
        return StatusLine(stream)
    return PhaseLines(stream)


class Messages:
    """A plain ``message -> None`` function as a :class:`Reporter`, for callers of
    :func:`~conformance.fuzz.campaign.fuzz` that only want the messages and phase names."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self.say = say

    def begin(self, tally: Tally) -> None:
        pass

    def phase(self, name: str) -> None:
        self.say(f"{name} phase")

    def message(self, text: str) -> None:
        self.say(text)

    def end(self) -> None:
        pass


@dataclass
class Live:
    """The run's tally and the reporter that shows it, handed down to the event handlers."""

    report: Reporter
    tally: Tally

    def enter(self, phase: str) -> None:
        """Tell the reporter of ``phase`` unless it is the current one (schemathesis restarts
        the fuzzing phase until the time budget is spent)."""
        if self.tally.phase != phase:
            self.tally.phase = phase
            self.report.phase(phase)
