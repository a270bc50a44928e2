"""How much of the catalog a run judged: a SKIP is a hole in the verdict, so every report counts
them, by level and by why.

A rule is *judged* when it PASSed, FAILed or was NON_STRICT; ERROR and SKIP are not verdicts on
the server. Each SKIP falls in one group, read off its reason:

- ``feature not claimed``: the profile or ``--no-feature`` says the server lacks the feature,
  so the rule does not apply (not a hole);
- ``probe could not run``: a request the rule needs was not sent or not finished (the request
  budget, a probe another probe's answer left without input);
- ``prerequisite broken``: the exchange is there but another defect, judged by another rule,
  or the server's output, leaves nothing this rule can judge.

``--fail-on-skip`` makes a run fail when a MUST rule of a claimed feature could not be judged.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .results import RuleResult
from .rule import Level
from .verdicts import Verdict

NOT_CLAIMED = "feature not claimed"
NOT_RUN = "probe could not run"
BROKEN = "prerequisite broken"
SKIP_GROUPS = (NOT_CLAIMED, NOT_RUN, BROKEN)
JUDGED = frozenset({Verdict.PASS, Verdict.FAIL, Verdict.NON_STRICT})
_NOT_RUN_MARKS = ("was not run", "was not sent", "not finished", "could not finish",
                  "skipped: not a", "skipped: the profile")


def skip_group(message: str) -> str:
    """The group of a SKIP's reason (see the module docstring)."""
    if NOT_CLAIMED in message:
        return NOT_CLAIMED
    if any(mark in message for mark in _NOT_RUN_MARKS):
        return NOT_RUN
    return BROKEN


@dataclass(frozen=True)
class Coverage:
    """Judged and total rules per level, SKIPs per group, and the MUST rules of claimed
    features that could not be judged (what ``--fail-on-skip`` fails on)."""

    judged: dict[str, int]
    total: dict[str, int]
    skipped: dict[str, int]
    unjudged_must: tuple[str, ...]

    def line(self) -> str:
        """``judged: MUST 40 of 45, SHOULD 10 of 12; skipped: 3 feature not claimed, ...``"""
        levels = ", ".join(f"{level} {self.judged[level]} of {self.total[level]}"
                           for level in self.total if self.total[level])
        skips = ", ".join(f"{count} {group}" for group, count in self.skipped.items() if count)
        return f"judged: {levels}" + (f"; skipped: {skips}" if skips else "")


def coverage_of(results: Iterable[RuleResult]) -> Coverage:
    levels = [str(level) for level in Level]
    judged = dict.fromkeys(levels, 0)
    total = dict.fromkeys(levels, 0)
    skipped = dict.fromkeys(SKIP_GROUPS, 0)
    unjudged: list[str] = []
    for result in results:
        level = str(result.rule.level)
        total[level] += 1
        if result.verdict in JUDGED:
            judged[level] += 1
        elif result.verdict is Verdict.SKIP:
            group = skip_group(result.message)
            skipped[group] += 1
            if group != NOT_CLAIMED and result.rule.level is Level.MUST:
                unjudged.append(result.rule.id)
    return Coverage(judged, total, skipped, tuple(unjudged))
