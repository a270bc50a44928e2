"""The per-choice random number generator: reproducible draws for a given seed.

``SeededRng`` wraps the stdlib's ``random.Random`` (Mersenne Twister): for an int seed its
``random()`` sequence is documented as stable across Python versions and platforms, unlike
numpy's default generator. One ``SeededRng`` is created per choice by the caller; ``sample``
consumes exactly one ``random()`` per sampled step, plus one XTC trial per step when XTC is
active, and none for greedy steps, so equal seeds and parameters give equal tokens.
"""

from __future__ import annotations

import random

_SEED_MODULUS = 1 << 64


class SeededRng:
    """``random()`` in [0, 1) from a seed; counts the calls made (``calls``).

    The seed is reduced modulo 2**64 before seeding, so the whole int64 range of the API's
    ``seed`` gives distinct sequences (``random.Random`` alone seeds -1 and 1 identically).
    """

    __slots__ = ("_random", "calls", "seed")

    def __init__(self, seed: int) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TypeError(f"seed must be an integer, got {seed!r}")
        self.seed = seed
        self._random = random.Random(seed % _SEED_MODULUS)
        self.calls = 0

    def random(self) -> float:
        self.calls += 1
        return self._random.random()

    def __repr__(self) -> str:
        return f"SeededRng(seed={self.seed!r}, calls={self.calls})"
