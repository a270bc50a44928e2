"""Comparing reports: a run against the last one (:mod:`.diff`), read from the JSON reports
``run`` and ``fuzz`` write and from the lab's recordings (:mod:`.reports`)."""

from .diff import Change, ChangeKind, ReportDiff, diff_reports
from .reports import ReportError, RuleEntry, SavedReport, load_report

__all__ = [
    "Change",
    "ChangeKind",
    "ReportDiff",
    "ReportError",
    "RuleEntry",
    "SavedReport",
    "diff_reports",
    "load_report",
]
