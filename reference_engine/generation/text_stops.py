"""Stop strings: cut the text at the first match and never release part of a stop string.

OpenAI: "Up to 4 sequences where the API will stop generating further tokens. The returned text
will not contain the stop sequence." A stop string may span several tokens, so text that could
be the start of a stop string is held back until the next characters decide (the bug class
"partial stop-sequence prefix leaked in streams"). Held text is released when generation ends
for another reason, so nothing is lost either.

vLLM's ``include_stop_str_in_output`` keeps the matched stop string at the end of the text
(held back like any stop-string prefix until it matches, then released with it); either way
:attr:`TextStopMatcher.matched` names the stop string that ended the text (vLLM's
``stop_reason``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass
class StopScan:
    """What ``TextStopMatcher.push`` decided: text to release, and whether a stop matched."""

    release: str
    stopped: bool


class TextStopMatcher:
    """Tracks the completion text and the part of it already released."""

    def __init__(self, stops: Sequence[str], *, include: bool = False) -> None:
        self._stops = tuple(s for s in stops if s)
        self._include = include
        self.matched: str | None = None
        self._longest = max((len(s) for s in self._stops), default=0)
        self._text = ""
        self._released = 0
        self.active = True

    @property
    def text(self) -> str:
        """All text seen so far (released or held)."""
        return self._text

    @property
    def released(self) -> int:
        """How many characters of :attr:`text` were released."""
        return self._released

    def push(self, delta: str) -> StopScan:
        """Add decoded text; release what can no longer be part of a stop string."""
        if not delta:
            return StopScan("", False)
        if not self._stops:  # nothing to hold back (the common case: one append, no scan)
            self._text += delta
            self._released = len(self._text)
            return StopScan(delta, False)
        start = max(0, len(self._text) - self._longest + 1)
        self._text += delta
        if self.active:
            cut = self._first_match(start)
            if cut is not None:
                if self._include and self.matched is not None:
                    cut += len(self.matched)
                self._text = self._text[:cut]
                scan = self._release_to(cut)
                return StopScan(scan.release, True)
        return self._release_to(len(self._text) - self._held_suffix())

    def finish(self) -> str:
        """Generation ended without a stop string: release everything held."""
        return self._release_to(len(self._text)).release

    def _first_match(self, start: int) -> int | None:
        """Where the earliest stop string starts (the first listed, of two at one place);
        :attr:`matched` becomes that stop string."""
        found = [(p, k) for k, p in enumerate(self._text.find(s, start) for s in self._stops)
                 if p >= 0]
        if not found:
            return None
        position, k = min(found)
        self.matched = self._stops[k]
        return position

    def _held_suffix(self) -> int:
        """Length of the longest text suffix that is a proper prefix of some stop string."""
        if not self.active:
            return 0
        text = self._text
        for length in range(min(self._longest - 1, len(text)), 0, -1):
            tail = text[-length:]
            if any(stop.startswith(tail) for stop in self._stops):
                return length
        return 0

    def _release_to(self, end: int) -> StopScan:
        end = max(end, self._released)
        chunk = self._text[self._released : end]
        self._released = end
        return StopScan(chunk, False)
