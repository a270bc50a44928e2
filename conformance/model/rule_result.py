"""One rule's result: its verdict, the message, and what a failed check reported."""

from __future__ import annotations

from dataclasses import dataclass

from spec import JSON

from .rule import Rule, Violation
from .verdicts import Verdict


@dataclass(frozen=True)
class Finding:
    """What a failed check reported (a :class:`~conformance.model.rule.Violation`, frozen)."""

    message: str
    expected: JSON = None
    actual: JSON = None
    path: str | None = None
    evidence: str | None = None
    exchange: str | None = None
    curl: str | None = None

    @classmethod
    def of(cls, violation: Violation, curl: str | None = None) -> Finding:
        return cls(
            violation.message,
            violation.expected,
            violation.actual,
            violation.path,
            violation.evidence,
            violation.exchange,
            curl,
        )


@dataclass(frozen=True)
class RuleResult:
    """The verdict of one rule; ``finding`` is set for FAIL and NON_STRICT."""

    rule: Rule
    verdict: Verdict
    message: str = ""
    finding: Finding | None = None
    exchanges: tuple[str, ...] = ()
    """The exchanges (``probe/key``) the rule's probes recorded."""
    more: tuple[Finding, ...] = ()
    """The rule's further failing cases, after ``finding`` (one finding per case)."""

    @property
    def findings(self) -> tuple[Finding, ...]:
        """Every failing case, the first (``finding``) first."""
        return ((self.finding,) if self.finding else ()) + self.more

    @property
    def area(self) -> str:
        return self.rule.area
