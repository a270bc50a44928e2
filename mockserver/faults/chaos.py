"""Chaos: some completion requests get one fault, chosen deterministically.

``--chaos-every K`` gives every K-th completion request a fault; ``--chaos-probability P``
gives each request one with probability P (drawn from an RNG seeded by ``--chaos-seed``). The
fault comes from ``--chaos-faults`` (or every fault marked ``chaos``) and must apply to the
request (its wire, whether it streams, whether its input was valid); the choice rotates
through that list, so a run with the same seed and request order picks the same faults.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

from .base import Fault, FaultContext
from .registry import all_faults


class Chaos:
    """Per-server chaos state (a request counter and a seeded RNG)."""

    def __init__(
        self,
        *,
        every: int | None = None,
        probability: float = 0.0,
        seed: int = 0,
        pool: Sequence[Fault] = (),
    ) -> None:
        if every is not None and every < 1:
            raise ValueError(f"--chaos-every must be >= 1, got {every}")
        if not 0.0 <= probability <= 1.0:
            raise ValueError(f"--chaos-probability must be in [0, 1], got {probability}")
        self.every = every
        self.probability = probability
        self.pool = tuple(pool) or tuple(f for f in all_faults() if f.chaos)
        self._rng = random.Random(seed)
        self._requests = itertools.count(1)
        self._picks = itertools.count()

    @property
    def enabled(self) -> bool:
        return self.every is not None or self.probability > 0.0

    def ticket(self) -> int | None:
        """Called once per completion request: a rank if this request gets a fault, else None."""
        if not self.enabled:
            return None
        number = next(self._requests)
        hit = (self.every is not None and number % self.every == 0) or (
            self.probability > 0.0 and self._rng.random() < self.probability
        )
        return next(self._picks) if hit else None

    def pick(self, ticket: int | None, ctx: FaultContext, *, invalid: bool) -> Fault | None:
        """The fault for a request holding ``ticket`` (None if none applies)."""
        if ticket is None:
            return None
        candidates = [f for f in self.pool if f.applies(ctx) and f.on_invalid == invalid]
        return candidates[ticket % len(candidates)] if candidates else None
