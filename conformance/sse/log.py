"""A bounded record of observations: the first few of each code are kept, all are counted."""

from __future__ import annotations

from .model import RAW_EXCERPT_BYTES, Observation


class ObservationLog:
    """Keeps at most ``per_code`` observations of each code, so hostile input stays bounded."""

    def __init__(self, per_code: int = 100) -> None:
        self.per_code = per_code
        self.items: list[Observation] = []
        self.counts: dict[str, int] = {}

    def add(self, code: str, message: str, offset: int, raw: bytes) -> None:
        """Record one observation; ``raw`` is cut to :data:`RAW_EXCERPT_BYTES`."""
        count = self.counts.get(code, 0)
        self.counts[code] = count + 1
        if count < self.per_code:
            self.items.append(Observation(code, message, offset, bytes(raw[:RAW_EXCERPT_BYTES])))
