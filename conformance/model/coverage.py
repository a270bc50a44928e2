"""How much of the catalog a run judged: a SKIP is a hole in the verdict, so every report counts
them, by level and by why.

A rule is *judged* when it PASSed, FAILed or was NON_STRICT; ERROR and SKIP are not verdicts on
the server. Each SKIP falls in one group, read off its reason:

- ``feature not claimed``: the profile or ``--no-feature`` says the server lacks the feature,
  so the rule does not apply (not a hole);
- ``prerequisite broken``: another defect leaves nothing this rule can judge, and the reason
  names the rule that judges that defect (``(judged by LOGPROBS-001)``, ``FINISH / INDICES
  rules``), which FAILed, ERRORed or was NON_STRICT in the same run: the hole is reported,
  and closes when that defect is fixed (a reason naming only rules that passed is a bug of
  the skipping rule, unless the rule named SKIPped pointing on at a failure:
  :func:`dangling_pointers`, which the tests check on every mock fault and lab recording,
  and ``lab/run check`` on live runs);
- ``probe could not run``: a request the rule needs was not sent or not finished (the request
  budget, a probe another probe's answer left without input), and no failing rule says why;
- ``precondition not met``: the rest: the server's output leaves nothing to judge and no rule
  reported a defect (two prompts that continue alike), or the rule named did not fail.

``--fail-on-skip`` makes a run fail when a MUST rule of a claimed feature could not be judged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .rule import Level
from .rule_result import RuleResult
from .verdicts import Verdict

NOT_CLAIMED = "feature not claimed"
BROKEN = "prerequisite broken"
NOT_RUN = "probe could not run"
UNMET = "precondition not met"
SKIP_GROUPS = (NOT_CLAIMED, BROKEN, NOT_RUN, UNMET)
JUDGED = frozenset({Verdict.PASS, Verdict.FAIL, Verdict.NON_STRICT})
_NOT_RUN_MARKS = ("was not run", "was not sent", "not finished", "could not finish",
                  "skipped: not a", "skipped: the profile")
_RULE_ID = re.compile(r"\b[A-Z][A-Z]*(?:-[A-Z]+)*-\d{3}\b")
_AREAS = re.compile(r"\b([A-Z][A-Z-]*(?: / [A-Z][A-Z-]*)*) rules\b")


def named_rules(message: str) -> set[str]:
    """The rule IDs and areas (``FINISH / INDICES rules``) a SKIP's reason names as judges."""
    names = set(_RULE_ID.findall(message))
    for group in _AREAS.findall(message):
        names.update(area.strip() for area in group.split("/"))
    return names


def skip_group(message: str, failing: frozenset[str] | None = None) -> str:
    """The group of a SKIP's reason (see the module docstring). ``failing`` holds the IDs and
    areas of the run's FAIL, NON_STRICT and ERROR rules (:func:`failing_names`); without it
    any named rule counts."""
    if NOT_CLAIMED in message:
        return NOT_CLAIMED
    named = named_rules(message)
    if named and (failing is None or named & failing):
        return BROKEN
    if any(mark in message for mark in _NOT_RUN_MARKS):
        return NOT_RUN
    return UNMET


def failing_names(results: Iterable[RuleResult]) -> frozenset[str]:
    """The IDs and areas of the rules that FAILed, were NON_STRICT or ERRORed: what a SKIP's
    reason may name as the judge of the defect that left it nothing to judge."""
    return frozenset(
        name for r in results if r.verdict in (Verdict.FAIL, Verdict.NON_STRICT, Verdict.ERROR)
        for name in (r.rule.id, r.rule.area)
    )


def dangling_pointers(results: Iterable[RuleResult]) -> dict[str, str]:
    """The SKIPs whose reason names rules as judges none of which failed in the run, nor
    SKIPped pointing at one that did (rule ID -> reason): a reader who follows such a pointer
    finds nothing wrong, so every one is a bug of the rule that SKIPped. A pointer at a SKIP
    holds when the reader, following it on, ends at a failure (PARAMS-002 -> ECHO-005 ->
    INDICES-001 on a server whose choice indices are random)."""
    return dangling_in_report(
        (r.rule.id, r.rule.area, r.verdict.value, r.message) for r in results)


def dangling_in_report(rows: Iterable[tuple[str, str, str, str]]) -> dict[str, str]:
    """:func:`dangling_pointers` over ``(rule, area, verdict, message)`` rows, as a JSON
    report lists them."""
    rows = list(rows)
    held = {name for rule, area, verdict, _ in rows
            if verdict in ("FAIL", "NON_STRICT", "ERROR") for name in (rule, area)}
    pointing = {rule: named for rule, _, verdict, message in rows
                if verdict == "SKIP" and NOT_CLAIMED not in message
                and (named := named_rules(message))}
    grown = True
    while grown:  # a SKIP whose pointer holds holds a pointer at it: ECHO-005 -> INDICES-001
        grown = False
        for rule, named in pointing.items():
            if rule not in held and named & held:
                held.add(rule)
                grown = True
    return {rule: message for rule, _, _, message in rows
            if rule in pointing and not pointing[rule] & held}


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
    results = list(results)
    failing = failing_names(results)
    for result in results:
        level = str(result.rule.level)
        total[level] += 1
        if result.verdict in JUDGED:
            judged[level] += 1
        elif result.verdict is Verdict.SKIP:
            group = skip_group(result.message, failing)
            skipped[group] += 1
            if group != NOT_CLAIMED and result.rule.level is Level.MUST:
                unjudged.append(result.rule.id)
    return Coverage(judged, total, skipped, tuple(unjudged))
