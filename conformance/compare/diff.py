"""What changed between two reports of a server: rules that got worse, got better, were newly
skipped or newly judged.

A rule got **worse** when it fails now (FAIL, NON_STRICT or ERROR) and did not before (it
passed, was skipped or was not in the report), or fails with a finding whose case
(:func:`~conformance.compare.reports.finding_case`) it did not have: one more broken case in
an umbrella rule is a regression even though its verdict stayed FAIL. It got **better** when it
failed and passes now, or lost cases and gained none. A rule that was judged and is now SKIPped
(or left the report) is **newly skipped**: not a regression, but a hole where there was a
verdict. A rule that was skipped and passes now is **newly judged**. Only a rule that got worse
makes ``conformance diff`` exit 1.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .reports import RuleEntry, SavedFinding, SavedReport

FAILING = frozenset({"FAIL", "NON_STRICT", "ERROR"})


class ChangeKind(enum.Enum):
    WORSE = "worse"
    BETTER = "better"
    NEWLY_SKIPPED = "newly skipped"
    NEWLY_JUDGED = "newly judged"


@dataclass(frozen=True)
class Change:
    """One rule's change; ``before`` / ``after`` are None where the report lacks the rule."""

    rule: str
    kind: ChangeKind
    title: str
    before: RuleEntry | None
    after: RuleEntry | None
    new_findings: tuple[SavedFinding, ...] = ()
    """Cases failing in AFTER that did not fail in BEFORE."""
    fixed_findings: tuple[SavedFinding, ...] = ()
    """Cases failing in BEFORE that do not fail in AFTER."""

    @property
    def verdicts(self) -> str:
        """``PASS -> FAIL`` (``absent`` for a rule a report lacks)."""
        def name(entry: RuleEntry | None) -> str:
            return entry.verdict if entry is not None else "absent"
        return f"{name(self.before)} -> {name(self.after)}"


@dataclass(frozen=True)
class ReportDiff:
    before: SavedReport
    after: SavedReport
    changes: tuple[Change, ...]

    def of_kind(self, kind: ChangeKind) -> tuple[Change, ...]:
        return tuple(change for change in self.changes if change.kind is kind)

    @property
    def exit_code(self) -> int:
        """1 when any rule got worse, else 0."""
        return 1 if self.of_kind(ChangeKind.WORSE) else 0


def _failing(entry: RuleEntry | None) -> bool:
    return entry is not None and entry.verdict in FAILING


def _judged(entry: RuleEntry | None) -> bool:
    return entry is not None and entry.verdict != "SKIP"


def rule_change(before: RuleEntry | None, after: RuleEntry | None) -> Change | None:
    """How one rule changed from ``before`` to ``after``; None when it did not."""
    entry = after or before
    assert entry is not None
    was = before.findings if _failing(before) and before is not None else {}
    now = after.findings if _failing(after) and after is not None else {}
    new = tuple(finding for case, finding in now.items() if case not in was)
    fixed = tuple(finding for case, finding in was.items() if case not in now)

    def change(kind: ChangeKind) -> Change:
        return Change(entry.rule, kind, entry.title, before, after, new, fixed)

    if _failing(after):
        if not _failing(before) or new:
            return change(ChangeKind.WORSE)
        return change(ChangeKind.BETTER) if fixed else None
    if _failing(before):
        return change(ChangeKind.BETTER if _judged(after) else ChangeKind.NEWLY_SKIPPED)
    if _judged(before) and not _judged(after):
        return change(ChangeKind.NEWLY_SKIPPED)
    if _judged(after) and not _judged(before):
        return change(ChangeKind.NEWLY_JUDGED)
    return None


def diff_reports(before: SavedReport, after: SavedReport) -> ReportDiff:
    """Every rule's change from ``before`` to ``after``, in AFTER's order, then the rules
    only BEFORE has."""
    order = list(after.rules) + [rule for rule in before.rules if rule not in after.rules]
    changes = []
    for rule in order:
        found = rule_change(before.rules.get(rule), after.rules.get(rule))
        if found is not None:
            changes.append(found)
    return ReportDiff(before, after, tuple(changes))
