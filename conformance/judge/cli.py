"""``conformance judge FILE...``: recorded traffic judged without sending a request.

The files (HAR, VCR cassettes, this harness's JSON reports; a directory stands for every such
file under it: :mod:`.sources`) are read one exchange at a time; the completions exchanges
among them (picked by path) are judged by every rule one exchange can judge
(:mod:`.judging`), and the verdicts go through the reporters of ``conformance run``. Exit
status: 0 nothing failed, 1 violations, 2 an input that cannot be read, or nothing to judge.
"""

from __future__ import annotations

import argparse
import time
from datetime import datetime, timezone
from typing import TextIO

import spec
from conformance.bindings.binders import binder_for
from conformance.compare.baseline import baseline_option
from conformance.errors import UsageError
from conformance.model import RunResult, RunStats, Target
from conformance.reporting import write_console
from conformance.run.report_files import add_report_arguments, exit_status, write_report_files
from conformance.run.rule_options import add_rule_selection, add_strict, selected_rules
from conformance.run.settings import Settings
from conformance.target.checks import pick_features, pick_profile, split_list
from conformance.target.options import add_target_option

from .judging import COMPLETIONS_PATHS, NOT_COMPLETIONS, Judge
from .progress import Progress
from .recordings.recorded import Recorded
from .recordings.sources import Input, exchanges, inputs

DESCRIPTION = """\
Judge recorded traffic without sending a request: HAR files (a browser's devtools,
mitmproxy, Charles, Proxyman, Polly.js), VCR cassettes (vcrpy, pytest-recording, Ruby VCR)
and this harness's own JSON reports (run --json, fuzz --json), told apart by their content.
A directory stands for every such file under it. The completions exchanges among them (POST
/v1/completions, /dedicated/v1/completions, and each --path) are judged one by one by every
rule that one exchange can judge, the rules `conformance fuzz` judges with: the request's
own body says what to expect (streamed or not, n, echo, logprobs, stop). A request the
server refused (4xx/5xx) is judged only by the rules about error answers (401, 403, 413, 429
and 503 not at all). Entries without a response or with a body the recorder cut short are
skipped, saying why. Each finding names its file and entry and reproduces the request as a
curl command, API keys redacted."""

EPILOG = """\
Exit status: 0 when no rule FAILed (NON_STRICT counts only with --strict), 1 on violations,
2 when an input cannot be read (one line says what is wrong) or holds no completions
exchange to judge.

Examples:
  conformance judge tests/cassettes/                 # an SDK's cassette folder
  conformance judge gateway-2026-12-06.har --path /openai/v1/completions --json day.json
  conformance judge report.json --profile openai-compatible"""


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:  # type: ignore[type-arg]
    parser: argparse.ArgumentParser = commands.add_parser(
        "judge", help="judge recorded traffic (HAR, VCR cassettes, reports) without sending",
        description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="a HAR file, a VCR cassette, a JSON report, or a directory of them")
    what = parser.add_argument_group("what is judged")
    what.add_argument("--profile", metavar="P",
                      help="the profile the recorded server is judged by (default openai): "
                      f"{', '.join(spec.profile_names())}, or a profile YAML file")
    add_target_option(what, "feature")
    add_target_option(what, "no-feature")
    what.add_argument("--path", action="append", default=[], metavar="PATH",
                      help="also judge POST requests to this path (a gateway's own, e.g. "
                      "/openai/v1/completions), repeatable")
    add_rule_selection(what, verb="judge")
    add_strict(what)
    what.add_argument("--baseline", metavar="FILE",
                      help="accepted deviations (a previous JSON report, or the YAML "
                      "`conformance baseline` writes): exit 0 while every failure is accepted")
    add_report_arguments(parser)
    return parser


def _paths(given: list[str]) -> tuple[str, ...]:
    paths = list(COMPLETIONS_PATHS)
    for path in split_list(given):
        if not path.startswith("/"):
            raise UsageError(f"--path takes a URL path starting with /, got {path!r}")
        paths.append(path.rstrip("/") or "/")
    return tuple(dict.fromkeys(paths))


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    profile = pick_profile(args.profile or "openai", None)
    features = pick_features(profile, args.feature, args.no_feature)
    chosen = selected_rules(args, profile)
    readable = [rule for rule in chosen
                if binder_for(rule) is not None and rule.fuzz not in NOT_COMPLETIONS]
    if not readable:
        raise UsageError("no rule that judges one exchange matches --select / --deselect for "
                         "this profile")
    claimed = tuple(rule for rule in readable if all(f in features for f in rule.features))
    unclaimed = tuple(rule for rule in readable if rule not in claimed)
    baseline = baseline_option(args.baseline)
    settings = Settings(base_url="recorded", profile=profile, model="recorded",
                        features=features)
    judge = Judge(settings, claimed, paths=_paths(args.path))
    sources, others = inputs(args.files)
    progress = Progress(err, quiet=args.quiet)
    started, clock = datetime.now(timezone.utc), time.monotonic()
    problems: list[str] = []
    try:
        for source in sources:
            read = 0
            for item in exchanges(source):
                read += 1
                if isinstance(item, Recorded):
                    judge.add(item)
                else:
                    problems.append(item)
                progress.tick(source.name, read, judge.completions)
    finally:
        progress.end()
    notes = _notes(sources, others, problems) + judge.notes()
    for line in notes:
        out.write(line + "\n")
    if not judge.judged_exchanges:
        raise UsageError(f"no completions exchange to judge in {_listed(args.files)} (the "
                         "paths judged: " + ", ".join(judge.paths) + "; --path adds one)")
    result = RunResult(
        target=Target(_where(args.files), profile.name, _models(judge), tuple(sorted(features))),
        results=judge.results(unclaimed), exchanges=judge.exchanges,
        stats=RunStats(wall_seconds=time.monotonic() - clock, completions=judge.completions,
                       answered=judge.completions - len(judge.unjudgeable)),
        strict=args.strict, notes=tuple(notes), started_at=started,
        options=getattr(args, "given", ()),
    )
    out.write("\n")
    write_console(result, out, verbose=args.verbose)
    write_report_files(args, result)
    return exit_status(result, baseline, out)


def _notes(sources: list[Input], others: list[str], problems: list[str]) -> list[str]:
    kinds: dict[str, int] = {}
    for source in sources:
        kinds[source.kind] = kinds.get(source.kind, 0) + 1
    read = ", ".join(f"{count} {kind}{'s' if count > 1 and kind != 'HAR' else ''}"
                     for kind, count in kinds.items())
    lines = [f"read {read or 'no file'}"]
    if others:
        lines.append(f"skipped {len(others)} file{'s' if len(others) > 1 else ''} that "
                     f"{'are' if len(others) > 1 else 'is'} no recording: "
                     + ", ".join(others[:10]) + (f", and {len(others) - 10} more"
                                                 if len(others) > 10 else ""))
    if problems:
        lines.append(f"skipped {len(problems)} entries that are no exchange: "
                     + "; ".join(problems[:3]) + ("; ..." if len(problems) > 3 else ""))
    return lines


def _listed(files: list[str]) -> str:
    return ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")


def _where(files: list[str]) -> str:
    """What the report's header names as the target: the recordings."""
    return f"recorded traffic: {_listed(files)}"


def _models(judge: Judge) -> str:
    if not judge.models:
        return "-"
    names = [name for name, _ in judge.models.most_common(3)]
    more = len(judge.models) - len(names)
    return ", ".join(names) + (f" (+{more})" if more else "")
