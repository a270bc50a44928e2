"""Reporters: each reads a :class:`~conformance.model.RunResult` and writes one format."""

from .console import summary_table, write_console
from .html_report import html_report, write_html
from .json_report import report_json, write_json
from .junit import junit_xml, write_junit
from .progress import ConsoleProgress

__all__ = [
    "ConsoleProgress",
    "html_report",
    "junit_xml",
    "report_json",
    "summary_table",
    "write_console",
    "write_html",
    "write_json",
    "write_junit",
]
