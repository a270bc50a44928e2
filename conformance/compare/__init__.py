"""Comparing reports: a run against the last one (:mod:`.diff`), against its accepted
deviations (:mod:`.baseline`), servers side by side (:mod:`.matrix`); read from the JSON
reports ``run`` and ``fuzz`` write and from the lab's recordings (:mod:`.reports`), which
:mod:`.rejudge` can judge again with today's catalog."""

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
