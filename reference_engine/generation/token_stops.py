"""Stop token sequences (FriendliAI ``stop_tokens``, and ``eos_token``): end at a match.

Like stop strings, a matched sequence is excluded from the output, and a multi-token sequence
may begin before it is recognised; so tokens that form a proper prefix of some sequence are held
here, before decoding, and released (in order) as soon as they cannot be part of a match.
"""

from __future__ import annotations

from collections.abc import Sequence


class TokenStopMatcher:
    """Holds back tokens that may be the start of a stop sequence."""

    def __init__(self, sequences: Sequence[Sequence[int]]) -> None:
        self._sequences = tuple(tuple(s) for s in sequences if len(s) > 0)
        self._held: list[int] = []

    @property
    def held(self) -> tuple[int, ...]:
        return tuple(self._held)

    def push(self, token_id: int) -> tuple[list[int], bool]:
        """Add a sampled token: returns (tokens to release, whether a sequence matched).

        On a match the held tokens and this one are dropped; they belong to the stop sequence.
        """
        if not self._sequences:
            return [token_id], False
        candidate = [*self._held, token_id]
        for sequence in self._sequences:
            n = len(sequence)
            if len(candidate) >= n and tuple(candidate[-n:]) == sequence:
                released = candidate[:-n]
                self._held = []
                return released, True
        # Keep the longest suffix that is still a proper prefix of a sequence.
        for keep in range(min(len(candidate), self._longest_prefix()), 0, -1):
            tail = tuple(candidate[-keep:])
            if any(len(s) > keep and s[:keep] == tail for s in self._sequences):
                self._held = list(tail)
                return candidate[:-keep], False
        self._held = []
        return candidate, False

    def flush(self) -> list[int]:
        """Generation ended for another reason: release what is held."""
        held, self._held = self._held, []
        return held

    def _longest_prefix(self) -> int:
        return max(len(s) for s in self._sequences) - 1
