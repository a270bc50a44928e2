"""``conformance matrix``: the command line of a matrix of servers (reports in, tables out)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

import spec
from conformance.errors import UsageError

from .reports import ReportError, SavedReport, load_report


def add_matrix_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    matrix = commands.add_parser(
        "matrix", help="one table of servers by rules, from their reports",
        description="One table of servers (columns) by rules (rows, grouped by area), each "
        "cell the rule's verdict on that server and, when it failed more than one case, how "
        "many; each area's row counts PASS/FAIL/SKIP. Reports of `run` or `fuzz` (or lab "
        "recordings). A failing cell links to the finding: in the server's own HTML report "
        "when REPORT.html sits beside REPORT.json, else to the list of findings (message, "
        "cases, curl) under the table. Without --markdown or --html, Markdown goes to stdout.",
        epilog="Exit status: 0, or 2 when a report cannot be read. Example: conformance "
        "matrix --replay tests/fixtures/lab/*.json --html matrix.html")
    matrix.add_argument("reports", nargs="+", metavar="REPORT.json",
                        help="JSON reports, one column each, in this order")
    matrix.add_argument("--label", action="append", default=[], metavar="NAME",
                        help="name of the next column, in order (repeat it; default: the "
                        "report's file name without .json)")
    matrix.add_argument("--replay", action="store_true",
                        help="judge each report again with today's catalog: serve its "
                        "exchanges with `mockserver --replay` and run the catalog against "
                        "them, as `lab/run verdicts` does (for recordings made before a rule "
                        "changed; reports of `run` only)")
    matrix.add_argument("--markdown", metavar="FILE", help="write the matrix as Markdown")
    matrix.add_argument("--html", metavar="FILE",
                        help="write the matrix as one self-contained HTML page")


def _reports(args: argparse.Namespace) -> list[SavedReport]:
    if len(args.label) > len(args.reports):
        raise UsageError(f"{len(args.label)} --label for {len(args.reports)} reports")
    if args.replay:
        from .rejudge import rejudge

        return [rejudge(path) for path in args.reports]
    return [load_report(path) for path in args.reports]


def _catalog_drift(report: SavedReport) -> str | None:
    """A line when ``report`` was judged by another catalog than today's: it holds a rule
    today's lacks, or (a full run of ``run``, not a selection, not fuzz) lacks one of today's
    for its profile. Its verdicts may have moved since."""
    from conformance.rules import CATALOG

    try:
        today = {rule.id for rule in CATALOG.select(profile=spec.get_profile(report.profile_name))}
    except (KeyError, ValueError):
        return None
    held = set(report.rules)
    gone = sorted(held - today - {r for r in held if r.startswith("FUZZ-")})
    selected = report.fuzz or any(o.startswith(("--select", "--deselect"))
                                  for o in report.options)
    missing = [] if selected else sorted(today - held)
    if not gone and not missing:
        return None
    said = [f"{what} {', '.join(rules[:5])}" + (" ..." if len(rules) > 5 else "")
            for what, rules in (("without", missing), ("with", gone)) if rules]
    return (f"conformance: {report.path} was judged by another catalog ({'; '.join(said)}): "
            "its verdicts may have moved since; --replay judges it again")


def run_matrix(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .matrix import build_matrix
    from .matrix_render import matrix_html, matrix_markdown

    try:
        reports = _reports(args)
    except ReportError as exc:
        raise UsageError(str(exc)) from None
    for report in reports if not args.replay else ():
        drift = _catalog_drift(report)
        if drift:
            err.write(drift + "\n")
    matrix = build_matrix(reports, names=args.label)
    if args.markdown:
        Path(args.markdown).write_text(matrix_markdown(matrix), encoding="utf-8")
    if args.html:
        page = matrix_html(matrix, here=Path(args.html).resolve().parent)
        Path(args.html).write_text(page, encoding="utf-8")
    if not args.markdown and not args.html:
        out.write(matrix_markdown(matrix))
    return 0
