"""Simulated latency: time to first token, inter-token latency, jitter, from a seeded RNG.

Streams sleep before each token chunk (``--ttft-ms`` before the first, ``--itl-ms`` before
the next ones); a non-streamed answer sleeps their sum once before it is sent. ``--jitter-ms``
adds a uniform offset in [-jitter, +jitter] to each interval (never below zero). One RNG per
server, seeded by ``--latency-seed``, so the same request order gives the same delays.
"""

from __future__ import annotations

import random

from ..sse import Frame


class Latency:
    """Draws the delays, in seconds."""

    def __init__(self, *, ttft_ms: float = 0.0, itl_ms: float = 0.0, jitter_ms: float = 0.0,
                 seed: int = 0) -> None:
        self.ttft_s = ttft_ms / 1000.0
        self.itl_s = itl_ms / 1000.0
        self.jitter_s = jitter_ms / 1000.0
        self._rng = random.Random(seed)

    @property
    def enabled(self) -> bool:
        return self.ttft_s > 0 or self.itl_s > 0 or self.jitter_s > 0

    def _jittered(self, base: float) -> float:
        if self.jitter_s <= 0:
            return base
        return max(0.0, base + self._rng.uniform(-self.jitter_s, self.jitter_s))

    def first_token(self) -> float:
        return self._jittered(self.ttft_s)

    def next_token(self) -> float:
        return self._jittered(self.itl_s)

    def whole(self, tokens: int) -> float:
        """A non-streamed answer of ``tokens`` tokens: TTFT plus one ITL per further token."""
        if not self.enabled:
            return 0.0
        return self.first_token() + sum(self.next_token() for _ in range(max(0, tokens - 1)))


def is_token_frame(frame: Frame) -> bool:
    """A chunk that carries new text (latency applies to these, not to finish or usage)."""
    payload = frame.payload
    if not isinstance(payload, dict):
        return False
    entries = payload.get("choices")
    if not isinstance(entries, list) or not entries:
        return False
    return all(
        isinstance(c, dict) and c.get("finish_reason") is None for c in entries
    )
