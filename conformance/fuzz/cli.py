"""``conformance fuzz``: the command line of a fuzz run (flags, the target, the reports).

Every search flag a user can get wrong is checked here and named in the error (exit status 2),
the target's flags by :func:`~conformance.target.resolved.resolve_target`, as for ``run``; the
target is opened (the embedded mock started, the target reached) by
:func:`~conformance.target.opening.open_target`, and the run itself is
:func:`conformance.fuzz.campaign.fuzz`. Progress goes to stderr, the report to stdout.
"""

from __future__ import annotations

import argparse
import dataclasses
from datetime import datetime, timezone
from pathlib import Path
from typing import TextIO

from hypothesis.database import ExampleDatabase

from conformance.compare.baseline import baseline_option
from conformance.errors import HarnessError, UsageError
from conformance.reporting import write_console
from conformance.run.report_files import add_report_arguments, exit_status, write_report_files
from conformance.run.rule_options import add_rule_selection, add_strict
from conformance.target.checks import split_list
from conformance.target.opening import open_target
from conformance.target.options import add_target_arguments, target_from_args
from conformance.target.resolved import resolve_target

from .answered import unjudged
from .bodies import Caps
from .campaign import fuzz
from .config import FuzzConfig, FuzzResult
from .example_db import close_database, example_db_location, open_redis
from .progress import reporter
from .results import run_result

DEFAULT_MAX_EXAMPLES = 50
MAX_CONCURRENCY = 64
PHASES = ("examples", "coverage", "fuzzing")


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:  # type: ignore[type-arg]
    fuzz_parser: argparse.ArgumentParser = commands.add_parser(
        "fuzz", help="fuzz a server with schemathesis and the catalog's rules",
        description="Fuzz a server from the contract with schemathesis: positive and negative "
        "requests of the profile's operations, judged by schemathesis' checks and by the "
        "catalog's rules that can judge one exchange. Without --base-url it fuzzes the "
        "embedded mock. Every request is capped (--max-tokens, n, best_of, prompt lists) and "
        "counted (--max-requests); 429 and 503 answers are retried with backoff.",
        epilog="Exit status: 0 when nothing was found (or, with --baseline, nothing it does not "
        "accept), 1 on findings, 2 on usage or harness "
        "errors (the target unreachable included). The seed is printed: --seed replays a run.",
    )
    groups = add_target_arguments(
        fuzz_parser,
        defaults={"concurrency": 1},
        helps={
            "base-url": "base URL as an OpenAI client takes it, e.g. http://127.0.0.1:8000/v1 "
            "(default: start the embedded mock)",
            "max-tokens": "max_tokens cap of every request (at least 4; default 16); n, best_of "
            "and prompt lists are capped too",
            "concurrency": "requests in flight at once: schemathesis worker threads (default 1; "
            "--workers is the same flag)",
        },
        aliases={"concurrency": ("workers",)},
    )
    search = fuzz_parser.add_argument_group("search")
    search.add_argument("--max-examples", type=int, default=DEFAULT_MAX_EXAMPLES, metavar="N",
                        help=f"cases the fuzzing phase generates per operation (default "
                        f"{DEFAULT_MAX_EXAMPLES})")
    search.add_argument("--seed", type=int, metavar="S", help="random seed (default: drawn and "
                        "printed)")
    search.add_argument("--mode", choices=("all", "positive", "negative"), default="all",
                        help="valid requests, invalid ones, or both (default all)")
    search.add_argument("--phases", default=",".join(PHASES), metavar="LIST",
                        help=f"comma-separated among {', '.join(PHASES)} (default all three)")
    search.add_argument("--no-shrink", action="store_true",
                        help="report findings as found, without shrinking them")
    add_strict(search, help="also judge SHOULD rules (a broken one then counts as a finding)")
    add_rule_selection(search, verb="judge")
    database = search.add_mutually_exclusive_group()
    database.add_argument(
        "--example-db", metavar="DIR|URL",
        help="keep the example database in the folder DIR, or in the Redis database at "
        "redis://HOST:PORT/N, which every shard of a CI matrix and every later run share "
        "(needs pip install 'completions-conformance[redis]'; the server must answer at the "
        "start): the failures found, which the next run sends again first, and the examples "
        "the search steered towards (then a --seed no longer replays a run exactly; default: "
        "no database)")
    database.add_argument(
        "--keep-examples", action="store_true",
        help="keep the example database in the user's cache directory "
        "(completions-conformance/hypothesis/examples under $XDG_CACHE_HOME or ~/.cache)")
    groups["limits"].add_argument(
        "--time-budget", type=float, metavar="S",
        help="search for S seconds, then stop (fuzzing repeats until then); the whole run, "
        "shrinking included, ends by S, a request in flight cut there (default: no repeats, "
        f"and the run ends after {FuzzConfig.time_limit:g} s at the latest)")
    search.add_argument("--baseline", metavar="FILE",
                        help="accepted deviations: a previous JSON report (of fuzz or run), or "
                        "the YAML `conformance baseline REPORT.json` writes; exit 0 while every "
                        "finding is accepted, 1 on one that is not (the reports are unchanged)")
    add_report_arguments(fuzz_parser, verbose=False,
                         quiet_help="no progress on stderr (by default a status line redrawn "
                         "in place on a terminal, one line per phase otherwise)")
    return fuzz_parser


def fuzz_config(args: argparse.Namespace) -> FuzzConfig:
    """The search flags as a :class:`FuzzConfig`; a :class:`UsageError` names a flag out of
    range (the target's flags are :func:`~conformance.target.resolved.resolve_target`'s)."""
    for flag, value, low in (("--max-examples", args.max_examples, 1), ("--seed", args.seed, 0)):
        if value is not None and value < low:
            raise UsageError(f"{flag} must be at least {low}, got {value}")
    if args.concurrency > MAX_CONCURRENCY:
        raise UsageError(f"--concurrency must be at most {MAX_CONCURRENCY}, "
                         f"got {args.concurrency}")
    if args.time_budget is not None and not args.time_budget > 0:
        raise UsageError(f"--time-budget must be positive, got {args.time_budget}")
    phases = tuple(split_list([args.phases]))
    unknown = sorted(set(phases) - set(PHASES))
    if unknown or not phases:
        raise UsageError(f"--phases takes {', '.join(PHASES)}; got {args.phases!r}")
    example_db = _example_db(args.example_db) if args.example_db else None
    return FuzzConfig(
        max_examples=args.max_examples, seed=args.seed, workers=args.concurrency,
        caps=Caps(max_tokens=args.max_tokens), time_budget=args.time_budget,
        max_requests=args.max_requests, mode=args.mode, strict=args.strict,
        select=tuple(split_list(args.select)), deselect=tuple(split_list(args.deselect)),
        phases=phases, shrink=not args.no_shrink, example_db=example_db,
        keep_examples=args.keep_examples or example_db is not None,
    )


def _example_db(value: str) -> Path | ExampleDatabase:
    """``--example-db``'s folder, or its Redis database once the server answered
    (:mod:`conformance.fuzz.example_db`; a :class:`HarnessError` when it does not)."""
    location = example_db_location(value)
    return location if isinstance(location, Path) else open_redis(location)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    target = resolve_target(target_from_args(args), embedded=not args.base_url)
    baseline = baseline_option(args.baseline)
    # every flag is checked before a mock is started for them (a Redis database opened last)
    config = fuzz_config(args)
    progress = reporter(err, quiet=args.quiet)
    try:
        with open_target(target, announce=progress.message) as opened:
            started_at = datetime.now(timezone.utc)
            result = fuzz(opened.settings, config, progress=progress)
    finally:
        close_database(config.example_db)
    _check_reachable(result)
    line = unjudged(result.statuses, result.stop_reason, target.options)
    if line is not None:
        raise HarnessError(line)
    report = dataclasses.replace(
        run_result(result, opened.settings, strict=config.strict, embedded=opened.embedded),
        started_at=started_at, options=getattr(args, "given", ()))
    write_console(report, out)
    write_report_files(args, report)
    # findings by rule and case under a baseline, the fuzz numbers dropped
    return exit_status(report, baseline, out)


def _check_reachable(result: FuzzResult) -> None:
    if result.unreachable:
        raise HarnessError(f"cannot connect to {result.base_url}: no request got an answer")
