"""``conformance fuzz``: the command line of a fuzz run (flags, the target, the reports).

Every flag a user can get wrong is checked here and named in the error (exit status 2); the run
itself is :func:`conformance.fuzz.engine.fuzz`. Progress goes to stderr, the report to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from typing import TextIO

from conformance.configure import (
    HarnessError,
    UsageError,
    build_settings,
    discover_model,
    parse_headers,
    pick_api_key,
    pick_features,
    pick_profile,
    split_list,
)
from conformance.embedded import EmbeddedMock
from conformance.settings import DEFAULT_TIMEOUT, Settings
from conformance.transport import Limits

from .bodies import Caps
from .engine import FuzzConfig, FuzzResult, fuzz
from .report import write_console, write_json, write_junit

DEFAULT_MAX_EXAMPLES = 50
DEFAULT_MAX_TOKENS = 16
PHASES = ("examples", "coverage", "fuzzing")


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:  # type: ignore[type-arg]
    fuzz_parser: argparse.ArgumentParser = commands.add_parser(
        "fuzz", help="fuzz a server with schemathesis and the catalog's rules",
        description="Fuzz a server from the contract with schemathesis: positive and negative "
        "requests of the profile's operations, judged by schemathesis' checks and by the "
        "catalog's rules that can judge one exchange. Without --base-url it fuzzes the "
        "embedded mock. Every request is capped (--max-tokens, n, best_of, prompt lists) and "
        "counted (--max-requests); 429 and 503 answers are retried with backoff.",
        epilog="Exit status: 0 when nothing was found, 1 on findings, 2 on usage or harness "
        "errors (the target unreachable included). The seed is printed: --seed replays a run.",
    )
    target = fuzz_parser.add_argument_group("target")
    target.add_argument("--base-url", metavar="URL",
                        help="base URL as an OpenAI client takes it, e.g. http://127.0.0.1:8000/v1 "
                        "(default: start the embedded mock)")
    target.add_argument("--profile", metavar="P",
                        help="openai, openai-compatible or friendli (default: friendli for "
                        ".../dedicated/v1 URLs, else openai)")
    target.add_argument("--model", metavar="M",
                        help="model to request (default: the first of GET /models; FriendliAI: "
                        "the endpoint id, required)")
    target.add_argument("--api-key", metavar="KEY",
                        help="bearer token (default: $CONFORMANCE_API_KEY or $OPENAI_API_KEY; "
                        "never printed)")
    target.add_argument("--header", action="append", default=[], metavar="'NAME: VALUE'",
                        help="extra request header, repeatable (values are redacted like keys)")
    target.add_argument("--feature", action="append", default=[], metavar="F",
                        help="claim an optional feature (spec/features.yaml), repeatable")
    target.add_argument("--no-feature", action="append", default=[], metavar="F",
                        help="do not claim a feature the profile claims, repeatable")
    search = fuzz_parser.add_argument_group("search")
    search.add_argument("--max-examples", type=int, default=DEFAULT_MAX_EXAMPLES, metavar="N",
                        help=f"cases the fuzzing phase generates per operation (default "
                        f"{DEFAULT_MAX_EXAMPLES})")
    search.add_argument("--seed", type=int, metavar="S", help="random seed (default: drawn and "
                        "printed)")
    search.add_argument("--workers", type=int, default=1, metavar="N",
                        help="concurrent requests (schemathesis worker threads, default 1)")
    search.add_argument("--mode", choices=("all", "positive", "negative"), default="all",
                        help="valid requests, invalid ones, or both (default all)")
    search.add_argument("--phases", default=",".join(PHASES), metavar="LIST",
                        help=f"comma-separated among {', '.join(PHASES)} (default all three)")
    search.add_argument("--no-shrink", action="store_true",
                        help="report findings as found, without shrinking them")
    search.add_argument("--strict", action="store_true",
                        help="also judge SHOULD rules (a broken one then counts as a finding)")
    search.add_argument("--select", action="append", default=[], metavar="IDS",
                        help="judge only these rule IDs or globs (SSE-*), comma-separated")
    search.add_argument("--deselect", action="append", default=[], metavar="IDS",
                        help="leave out these rule IDs or globs, comma-separated")
    caps = fuzz_parser.add_argument_group("live-endpoint safety")
    caps.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS, metavar="N",
                      help=f"max_tokens cap of every request (default {DEFAULT_MAX_TOKENS}); "
                      "n, best_of and prompt lists are capped too")
    caps.add_argument("--max-requests", type=int, metavar="N",
                      help="stop after N requests, retries and shrinking included")
    caps.add_argument("--time-budget", type=float, metavar="S",
                      help="search for S seconds, then stop (fuzzing repeats until then)")
    caps.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="S",
                      help=f"seconds allowed per request (default {DEFAULT_TIMEOUT:g})")
    reports = fuzz_parser.add_argument_group("reports")
    reports.add_argument("--json", metavar="FILE", help="write the JSON report")
    reports.add_argument("--junit-xml", metavar="FILE", help="write a JUnit XML report")
    reports.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    return fuzz_parser


def fuzz_config(args: argparse.Namespace) -> FuzzConfig:
    """The flags as a :class:`FuzzConfig`; a :class:`UsageError` names a flag out of range."""
    for flag, value, low in (("--max-examples", args.max_examples, 1),
                             ("--workers", args.workers, 1), ("--max-tokens", args.max_tokens, 1),
                             ("--max-requests", args.max_requests, 1), ("--seed", args.seed, 0)):
        if value is not None and value < low:
            raise UsageError(f"{flag} must be at least {low}, got {value}")
    if args.workers > 64:
        raise UsageError(f"--workers must be at most 64, got {args.workers}")
    for flag, value in (("--time-budget", args.time_budget), ("--timeout", args.timeout)):
        if value is not None and not value > 0:
            raise UsageError(f"{flag} must be positive, got {value}")
    phases = tuple(split_list([args.phases]))
    unknown = sorted(set(phases) - set(PHASES))
    if unknown or not phases:
        raise UsageError(f"--phases takes {', '.join(PHASES)}; got {args.phases!r}")
    return FuzzConfig(
        max_examples=args.max_examples, seed=args.seed, workers=args.workers,
        caps=Caps(max_tokens=args.max_tokens), time_budget=args.time_budget,
        max_requests=args.max_requests, mode=args.mode, strict=args.strict,
        select=tuple(split_list(args.select)), deselect=tuple(split_list(args.deselect)),
        phases=phases, shrink=not args.no_shrink,
    )


async def _settings(args: argparse.Namespace, mock: EmbeddedMock | None) -> Settings:
    profile = pick_profile(args.profile, None if mock else args.base_url)
    base_url = mock.url_for(profile.name) if mock is not None else args.base_url
    headers = parse_headers(args.header)
    api_key = pick_api_key(args.api_key, os.environ, embedded=mock is not None)
    model = args.model
    if not model:
        if mock is None and profile.models_path is None:
            raise UsageError(f"profile {profile.name} has no model listing: pass --model "
                             "(for FriendliAI Dedicated, the endpoint id)")
        listing = mock.openai_url if mock is not None else base_url
        model = await discover_model(listing, api_key=api_key, headers=headers,
                                     limits=Limits(total_time=min(args.timeout, 30.0)))
    return build_settings(
        base_url=base_url, profile=profile, model=model,
        features=pick_features(profile, args.feature, args.no_feature), api_key=api_key,
        headers=headers, max_tokens=max(args.max_tokens, 4), concurrency=args.workers,
        max_requests=args.max_requests, timeout=args.timeout,
    )


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    config = fuzz_config(args)
    # flags are checked before a mock is started for them
    profile = pick_profile(args.profile, args.base_url)
    parse_headers(args.header)
    pick_features(profile, args.feature, args.no_feature)
    if args.base_url and not args.model and profile.models_path is None:
        raise UsageError(f"profile {profile.name} has no model listing: pass --model "
                         "(for FriendliAI Dedicated, the endpoint id)")

    def progress(message: str) -> None:
        if not args.quiet:
            err.write(f"conformance fuzz: {message}\n")
            err.flush()

    mock = None if args.base_url else EmbeddedMock()
    try:
        if mock is not None:
            progress("starting the embedded mock server")
            mock.start()
        settings = asyncio.run(_settings(args, mock))
        result = fuzz(settings, config, progress=progress)
    finally:
        if mock is not None:
            mock.stop()
    _check_reachable(result)
    write_console(result, out, embedded=mock is not None)
    if args.json:
        write_json(result, args.json)
    if args.junit_xml:
        write_junit(result, args.junit_xml)
    return result.exit_code


def _check_reachable(result: FuzzResult) -> None:
    if result.unreachable:
        raise HarnessError(f"cannot connect to {result.base_url}: no request got an answer")
