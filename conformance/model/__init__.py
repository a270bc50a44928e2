"""The rule and result model of the harness (records only: no I/O)."""

from .registry import Registry
from .results import Finding, RuleResult, RunResult, RunStats, Search, Target
from .rule import (
    Check,
    ConformanceSignal,
    HarnessProblem,
    NotApplicable,
    Rule,
    Violation,
    fail_each,
)
from .verdicts import VERDICT_ORDER, Level, SourceKind, Verdict

__all__ = [
    "VERDICT_ORDER",
    "Check",
    "ConformanceSignal",
    "Finding",
    "HarnessProblem",
    "Level",
    "NotApplicable",
    "Registry",
    "Rule",
    "RuleResult",
    "RunResult",
    "RunStats",
    "Search",
    "SourceKind",
    "Target",
    "Verdict",
    "Violation",
    "fail_each",
]
