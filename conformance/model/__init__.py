"""The rule and result model of the harness (records only: no I/O)."""

from .named import NamedRegistry
from .registry import Registry
from .results import RunResult, RunStats, Search, Target
from .rule import (
    ConformanceSignal,
    HarnessProblem,
    NotApplicable,
    Rule,
    Violation,
    fail_each,
)
from .rule_result import Finding, RuleResult
from .verdicts import VERDICT_ORDER, Level, SourceKind, Verdict

__all__ = [
    "VERDICT_ORDER",
    "ConformanceSignal",
    "Finding",
    "HarnessProblem",
    "Level",
    "NamedRegistry",
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
