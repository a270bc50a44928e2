"""``conformance``: run the catalog against a server (or the embedded mock), or list it.

Exit status: 0 when nothing FAILed or ERRORed (NON_STRICT counts only with ``--strict``), 1 on
violations, 2 on usage or harness errors, 141 (quietly) when stdout's reader goes away
(``conformance list | head``). Progress goes to stderr, the report to stdout; API keys and
``--header`` values never appear in either.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import importlib.metadata
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from conformance.compare.baseline import baseline_option
from conformance.errors import HarnessError, UsageError
from conformance.rules import CATALOG
from conformance.run.given_options import given_options
from conformance.run.report_files import add_report_arguments, exit_status, write_report_files
from conformance.run.rule_options import add_rule_selection, add_strict, selected_rules
from conformance.run.runner import execute
from conformance.target.checks import pick_profile
from conformance.target.diagnosis import refused_run
from conformance.target.embedded import EmbeddedMockError
from conformance.target.opening import open_target
from conformance.target.options import add_target_arguments, target_from_args
from conformance.target.resolved import resolve_target
from procutil.broken_pipe import quiet_on_broken_pipe
from procutil.heap import fix_mmap_threshold

from .compare.matrix_cli import add_matrix_parser, run_matrix


def _version() -> str:
    try:
        return importlib.metadata.version("completions-conformance")
    except importlib.metadata.PackageNotFoundError:  # a checkout on sys.path, not installed
        return "unknown (not installed)"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="conformance",
        description="Conformance harness for OpenAI-compatible text Completions servers "
        "(and FriendliAI dedicated completions). Without --base-url it tests the embedded "
        "mock server.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = commands.add_parser(
        "run", help="run the rule catalog against a server",
        description="Run the rule catalog against a server (without --base-url: against "
        "the embedded mock, started as a child process).",
        epilog="Exit status: 0 when no rule FAILed or ERRORed (NON_STRICT counts only with "
        "--strict), 1 on violations, 2 on usage or harness errors.",
    )
    add_target_arguments(run, helps={
        "base-url": "base URL as an OpenAI client takes it, e.g. http://127.0.0.1:8000/v1 or "
        "https://api.friendli.ai/dedicated/v1 (default: start the embedded mock)",
        "max-tokens": "max_tokens of the probes (at least 4; default 16)",
    })
    chosen = run.add_argument_group("rules")
    add_rule_selection(chosen, verb="run")
    add_strict(chosen)
    chosen.add_argument("--fail-on-skip", action="store_true",
                        help="fail (exit 1) when a MUST rule of a claimed feature could not be "
                        "judged (its SKIP is not 'feature not claimed')")
    chosen.add_argument("--baseline", metavar="FILE",
                        help="accepted deviations: a previous JSON report, or the YAML "
                        "`conformance baseline REPORT.json` writes; exit 0 while every failure "
                        "is accepted, 1 on one that is not (the reports are unchanged)")
    add_report_arguments(run)
    from conformance.fuzz.cli import add_parser as add_fuzz_parser

    add_fuzz_parser(commands)
    from conformance.judge.cli import add_parser as add_judge_parser

    add_judge_parser(commands)
    compare = commands.add_parser(
        "diff", help="what changed between two reports: exit 1 when a rule got worse",
        description="Compare two JSON reports of `run` or `fuzz` (or lab recordings): the "
        "rules that got worse (now FAIL, NON_STRICT or ERROR, or failing with a case they did "
        "not fail before), got better, were newly skipped or newly judged. Findings are "
        "matched by rule, exchange and path, never by message text, so a reworded message is "
        "no change. Exit 1 when a rule got worse, 0 otherwise, 2 when a report cannot be read.")
    compare.add_argument("before", metavar="BEFORE.json", help="the earlier report")
    compare.add_argument("after", metavar="AFTER.json", help="the later report")
    compare.add_argument("--json", metavar="FILE", help="write the diff as JSON")
    compare.add_argument("--markdown", metavar="FILE",
                         help="write the diff as Markdown (it is also appended to "
                         "$GITHUB_STEP_SUMMARY whenever that is set)")
    accept = commands.add_parser(
        "baseline", help="write the accepted deviations of a report, for run --baseline",
        description="Write the failures of a JSON report as a baseline: YAML entries "
        "RULE/CASE: reason (one per failing case; RULE alone accepts every case of a rule). "
        "Keep it beside your code, give it to `conformance run --baseline FILE`, and edit the "
        "reasons.")
    accept.add_argument("report", metavar="REPORT.json", help="a report of `run` or `fuzz`")
    accept.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    add_matrix_parser(commands)
    listing = commands.add_parser("list", help="list the rules, one per line, ID first")
    listing.add_argument("--profile", metavar="P", help="only the rules of this profile")
    return parser


def _list(args: argparse.Namespace, out: TextIO) -> int:
    profile = pick_profile(args.profile, None) if args.profile else None
    for rule in CATALOG.select(profile=profile):
        faults = ",".join(rule.faults) or "-"
        out.write(f"{rule.id}\t{rule.level}\t{rule.title}\t[{faults}]\n")
    return 0


def _diff(args: argparse.Namespace, out: TextIO) -> int:
    from conformance.compare import ReportError, diff_reports, load_report
    from conformance.compare.render import write_json, write_markdown, write_text
    from conformance.reporting import summary_destinations

    try:
        diff = diff_reports(load_report(args.before), load_report(args.after))
    except ReportError as exc:
        raise UsageError(str(exc)) from None
    write_text(diff, out)
    if args.json:
        write_json(diff, args.json)
    for path, append in summary_destinations(args.markdown, os.environ):
        write_markdown(diff, path, append=append)
    return diff.exit_code


def _baseline(args: argparse.Namespace, out: TextIO) -> int:
    from conformance.compare import ReportError
    from conformance.compare.baseline import baseline_yaml

    try:
        text = baseline_yaml(args.report)
    except ReportError as exc:
        raise UsageError(str(exc)) from None
    if args.output:
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        out.write(text)
    return 0


DISCOVERY_LABEL = "discovery/models"
"""The report's label of the model-discovery request (``GET /models``)."""


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from conformance.reporting import ConsoleProgress, write_console

    target = resolve_target(target_from_args(args), embedded=not args.base_url)
    rules = selected_rules(args, target.profile)
    if not rules:
        raise UsageError("no rule matches --select / --deselect for this profile")
    baseline = baseline_option(args.baseline)
    progress = ConsoleProgress(err, enabled=not args.quiet)

    def say(line: str) -> None:
        if not args.quiet:
            err.write(f"conformance: {line}\n")

    with open_target(target, announce=say) as opened:
        result = asyncio.run(execute(opened.settings, rules, progress=progress,
                                     strict=args.strict, embedded=opened.embedded))
    if opened.discovery is not None:  # kept in the report: its replay must answer it too
        result = dataclasses.replace(
            result, exchanges={DISCOVERY_LABEL: opened.discovery, **result.exchanges})
    result = dataclasses.replace(result, fail_on_skip=args.fail_on_skip, options=args.given)
    refused = refused_run(result, opened.settings, target.options)
    if refused is not None:
        raise HarnessError(refused)
    write_console(result, out, verbose=args.verbose)
    write_report_files(args, result)
    if result.stats.stopped is not None:  # the SKIPs say it rule by rule; this says it once
        err.write(f"conformance: the run stopped early: {result.stats.stopped} (the rules it "
                  "did not reach SKIP; -v lists them)\n")
    return exit_status(result, baseline, out)


@quiet_on_broken_pipe
def main(argv: Sequence[str] | None = None, out: TextIO | None = None,
         err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    args = _parser().parse_args(argv)
    if args.command in ("run", "fuzz", "judge"):  # what the reports echo of how the run was made
        bare = [args.command] + (["-"] if args.command == "judge" else [])
        args.given = given_options(args, _parser().parse_args(bare))
    fix_mmap_threshold()  # what the limits bound is what the process holds (procutil/heap)
    try:
        if args.command == "list":
            return _list(args, out)
        if args.command == "diff":
            return _diff(args, out)
        if args.command == "baseline":
            return _baseline(args, out)
        if args.command == "matrix":
            return run_matrix(args, out, err)
        if args.command == "fuzz":
            from conformance.fuzz.cli import run as run_fuzz

            return run_fuzz(args, out, err)
        if args.command == "judge":
            from conformance.judge.cli import run as run_judge

            return run_judge(args, out, err)
        return _run(args, out, err)
    except BrokenPipeError:  # stdout's reader went away: quiet_on_broken_pipe handles it
        raise
    except (UsageError, HarnessError, EmbeddedMockError, OSError) as exc:
        err.write(f"conformance: error: {exc}\n")
        return 2
    except KeyboardInterrupt:
        err.write("conformance: interrupted\n")
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
