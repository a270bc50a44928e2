"""Reporters: each reads a :class:`~conformance.model.RunResult` and writes one format."""

from .console import summary_table, write_console
from .html_report import html_report, write_html
from .json_report import report_json, report_schema, write_json
from .junit import junit_xml, write_junit
from .markdown import markdown_summary, summary_destinations, write_markdown
from .progress import ConsoleProgress

__all__ = [
    "ConsoleProgress",
    "html_report",
    "junit_xml",
    "markdown_summary",
    "report_json",
    "report_schema",
    "summary_destinations",
    "summary_table",
    "write_console",
    "write_html",
    "write_json",
    "write_junit",
    "write_markdown",
]
