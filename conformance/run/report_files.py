"""What a run of ``conformance run``, ``fuzz`` or ``judge`` leaves behind: the report files its
flags ask for (``--json``, ``--junit-xml``, ``--html``, ``--markdown`` or
``$GITHUB_STEP_SUMMARY``), and its exit status, judged against ``--baseline`` when given."""

from __future__ import annotations

import argparse
import os
from typing import TextIO

from conformance.compare.baseline import Baseline, exit_code_with, judge_against, outcome_lines
from conformance.model import RunResult

QUIET_HELP = "no progress on stderr"


def add_report_arguments(parser: argparse.ArgumentParser, *, quiet_help: str = QUIET_HELP,
                         verbose: bool = True) -> argparse._ArgumentGroup:
    """The ``reports`` group of a command that writes a run's reports: the flags
    :func:`write_report_files` reads, then ``-q`` (``quiet_help`` says what it silences) and,
    with ``verbose``, ``-v`` (the console report also lists skipped rules)."""
    reports = parser.add_argument_group("reports")
    reports.add_argument("--json", metavar="FILE", help="write the JSON report")
    reports.add_argument("--junit-xml", metavar="FILE", help="write a JUnit XML report")
    reports.add_argument("--html", metavar="FILE", help="write a self-contained HTML report")
    reports.add_argument("--markdown", metavar="FILE",
                         help="write a Markdown summary (it is also appended to "
                         "$GITHUB_STEP_SUMMARY whenever that is set, as on GitHub Actions)")
    reports.add_argument("-q", "--quiet", action="store_true", help=quiet_help)
    if verbose:
        reports.add_argument("-v", "--verbose", action="store_true",
                             help="also list skipped rules")
    return reports


def write_report_files(args: argparse.Namespace, result: RunResult) -> None:
    """Every report file the flags name; the Markdown summary also where GitHub Actions reads
    one (appended to ``$GITHUB_STEP_SUMMARY``) whenever that is set, ``--markdown`` or not."""
    from conformance.reporting import (
        summary_destinations,
        write_html,
        write_json,
        write_junit,
        write_markdown,
    )

    if args.json:
        write_json(result, args.json)
    if args.junit_xml:
        write_junit(result, args.junit_xml)
    if args.html:
        write_html(result, args.html)
    for path, append in summary_destinations(args.markdown, os.environ):
        write_markdown(result, path, append=append)


def exit_status(result: RunResult, baseline: Baseline | None, out: TextIO) -> int:
    """The run's exit status; under a baseline, what it accepts does not count (its verdict
    on the run is printed: the failures it accepts, those it does not, what no longer fails)."""
    if baseline is None:
        return result.exit_code
    outcome = judge_against(result, baseline)
    for line in outcome_lines(baseline, outcome):
        out.write(line + "\n")
    return exit_code_with(result, outcome)
