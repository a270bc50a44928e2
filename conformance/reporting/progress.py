"""Progress on stderr while a run goes: one rewritten line on a terminal, a line per probe
otherwise (CI logs)."""

from __future__ import annotations

import time
from typing import TextIO

from conformance.probes import ProbeOutcome
from conformance.transport import Exchange


class ConsoleProgress:
    def __init__(self, stream: TextIO, *, enabled: bool = True) -> None:
        self.stream = stream
        self.enabled = enabled
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.probes = 0
        self.done = 0
        self.requests = 0
        self.started = time.perf_counter()

    def start(self, probes: int, rules: int) -> None:
        self.probes = probes
        self.started = time.perf_counter()
        if self.enabled and not self.tty:
            self.stream.write(f"conformance: {rules} rules, {probes} probes\n")
            self.stream.flush()

    def request(self, exchange: Exchange) -> None:
        self.requests += 1
        self._redraw()

    def probe_done(self, name: str, outcome: ProbeOutcome) -> None:
        self.done += 1
        if not self.enabled:
            return
        if self.tty:
            self._redraw(name)
            return
        state = outcome.skipped or outcome.problem or f"{len(outcome.exchanges)} requests"
        self.stream.write(f"conformance: probe {name}: {state}\n")
        self.stream.flush()

    def _redraw(self, last: str = "") -> None:
        if not (self.enabled and self.tty):
            return
        elapsed = time.perf_counter() - self.started
        line = (
            f"probes {self.done}/{self.probes}  requests {self.requests}  "
            f"{elapsed:5.1f} s  {last}"
        )
        self.stream.write("\r" + line[:100].ljust(100))
        self.stream.flush()

    def finish(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\r" + " " * 100 + "\r")
            self.stream.flush()
