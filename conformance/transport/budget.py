"""What one run may keep in memory, shared by all its exchanges.

Each exchange is bounded on its own (:class:`~conformance.transport.limits.Limits`), but a
run records some sixty of them, and a hostile server can fill every one to its limits: an
endless stream of 512 KB events once took a run past 7 GB. The budget bounds the sum: every
body byte an exchange keeps and every event it records (its data plus what the event and its
parsed JSON cost as Python objects) is taken from it, and an exchange that finds it spent
stops reading (:attr:`~conformance.transport.limits.Termination.RUN_MEMORY_LIMIT`).
"""

from __future__ import annotations

EVENT_OVERHEAD = 1024
"""Bytes charged per event beyond its data: the ``SSEEvent`` record, its line offsets and the
parsed JSON a view keeps (a small chunk's dict costs about this much)."""
PARSED_FACTOR = 3
"""An event keeps its raw bytes and its data as text, and a view once more as parsed JSON."""


class MemoryBudget:
    """Bytes the exchanges of one run may keep between them (``--max-run-bytes``)."""

    def __init__(self, max_bytes: int) -> None:
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be positive, got {max_bytes}")
        self.max_bytes = max_bytes
        self.spent = 0

    def take(self, amount: int) -> bool:
        """Charge ``amount`` bytes; False (and nothing charged) when they do not fit."""
        if self.spent + amount > self.max_bytes:
            return False
        self.spent += amount
        return True

    @staticmethod
    def event_cost(data_length: int) -> int:
        """What keeping one event of ``data_length`` characters costs."""
        return PARSED_FACTOR * data_length + EVENT_OVERHEAD

    def describe(self) -> str:
        return f"the run's memory budget of {self.max_bytes >> 20} MiB is spent"
