"""``conformance``: run the catalog against a server (or the embedded mock), or list it.

Exit status: 0 when nothing FAILed or ERRORed (NON_STRICT counts only with ``--strict``), 1 on
violations, 2 on usage or harness errors. Progress goes to stderr, the report to stdout; API
keys and ``--header`` values never appear in either.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from conformance.embedded import EmbeddedMock, EmbeddedMockError
from conformance.model import RunResult
from conformance.rules import CATALOG
from conformance.runner import execute
from conformance.settings import DEFAULT_CONCURRENCY, DEFAULT_MAX_TOKENS, DEFAULT_TIMEOUT
from conformance.transport import Exchange, Limits, Termination

from .configure import (
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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="conformance",
        description="Conformance harness for OpenAI-compatible text Completions servers "
        "(and FriendliAI dedicated completions). Without --base-url it tests the embedded "
        "mock server.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = commands.add_parser(
        "run", help="run the rule catalog against a server",
        description="Run the rule catalog against a server (without --base-url: against "
        "the embedded mock, started as a child process).",
        epilog="Exit status: 0 when no rule FAILed or ERRORed (NON_STRICT counts only with "
        "--strict), 1 on violations, 2 on usage or harness errors.",
    )
    target = run.add_argument_group("target")
    target.add_argument(
        "--base-url", metavar="URL",
        help="base URL as an OpenAI client takes it, e.g. http://127.0.0.1:8000/v1 or "
        "https://api.friendli.ai/dedicated/v1 (default: start the embedded mock)",
    )
    target.add_argument(
        "--api-key", metavar="KEY",
        help="API key sent as a bearer token (default: $CONFORMANCE_API_KEY or "
        "$OPENAI_API_KEY; never printed)",
    )
    target.add_argument(
        "--model", metavar="M",
        help="model to test (default: the first model GET /models lists; required for "
        "FriendliAI, whose dedicated endpoints have no model listing: pass the endpoint id)",
    )
    target.add_argument(
        "--profile", metavar="P",
        help="contract profile: openai, openai-compatible or friendli (default: friendli "
        "for .../dedicated/v1 URLs, else openai)",
    )
    target.add_argument("--header", action="append", default=[], metavar="'NAME: VALUE'",
                        help="extra request header, repeatable (values are redacted like keys)")
    target.add_argument("--feature", action="append", default=[], metavar="F",
                        help="claim an optional feature (see spec/features.yaml), repeatable")
    target.add_argument("--no-feature", action="append", default=[], metavar="F",
                        help="do not claim a feature the profile claims, repeatable")
    chosen = run.add_argument_group("rules")
    chosen.add_argument("--select", action="append", default=[], metavar="IDS",
                        help="run only these rule IDs or globs (SSE-*), comma-separated")
    chosen.add_argument("--deselect", action="append", default=[], metavar="IDS",
                        help="leave out these rule IDs or globs, comma-separated")
    chosen.add_argument("--strict", action="store_true",
                        help="count NON_STRICT (a broken SHOULD) as a failure")
    caps = run.add_argument_group("limits")
    caps.add_argument("--max-requests", type=int, metavar="N", help="stop sending after N requests")
    caps.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS, metavar="N",
                      help=f"max_tokens of the probes (default {DEFAULT_MAX_TOKENS})")
    caps.add_argument("--concurrency", type=int, default=DEFAULT_CONCURRENCY, metavar="N",
                      help=f"requests in flight at once (default {DEFAULT_CONCURRENCY})")
    caps.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="S",
                      help=f"seconds allowed per request (default {DEFAULT_TIMEOUT:g})")
    reports = run.add_argument_group("reports")
    reports.add_argument("--json", metavar="FILE", help="write the JSON report")
    reports.add_argument("--junit-xml", metavar="FILE", help="write a JUnit XML report")
    reports.add_argument("--html", metavar="FILE", help="write a self-contained HTML report")
    reports.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    reports.add_argument("-v", "--verbose", action="store_true", help="also list skipped rules")
    from conformance.fuzz.cli import add_parser as add_fuzz_parser

    add_fuzz_parser(commands)
    listing = commands.add_parser("list", help="list the rules, one per line, ID first")
    listing.add_argument("--profile", metavar="P", help="only the rules of this profile")
    return parser


def _list(args: argparse.Namespace, out: TextIO) -> int:
    profile = pick_profile(args.profile, None).name if args.profile else None
    for rule in CATALOG.select(profile=profile):
        faults = ",".join(rule.faults) or "-"
        out.write(f"{rule.id}\t{rule.level}\t{rule.title}\t[{faults}]\n")
    return 0


DISCOVERY_LABEL = "discovery/models"
"""The report's label of the model-discovery request (``GET /models``)."""


async def _prepare(  # type: ignore[no-untyped-def]
    args: argparse.Namespace,
    base_url: str,
    embedded: EmbeddedMock | None,
    seen: list[Exchange],
):
    profile = pick_profile(args.profile, None if embedded else base_url)
    headers = parse_headers(args.header)
    api_key = pick_api_key(args.api_key, os.environ, embedded=embedded is not None)
    features = pick_features(profile, args.feature, args.no_feature)
    model = args.model
    if not model:
        if embedded is not None:
            listing = embedded.openai_url
        elif profile.models_path is None:
            raise UsageError(
                f"profile {profile.name} has no model listing: pass --model "
                "(for FriendliAI Dedicated, the endpoint id)"
            )
        else:
            listing = base_url
        limits = Limits(total_time=min(args.timeout, 30.0))
        model = await discover_model(listing, api_key=api_key, headers=headers, limits=limits,
                                     on_exchange=seen.append)
    url = embedded.url_for(profile.name) if embedded is not None else base_url
    return build_settings(
        base_url=url, profile=profile, model=model, features=features, api_key=api_key,
        headers=headers, max_tokens=args.max_tokens, concurrency=args.concurrency,
        max_requests=args.max_requests, timeout=args.timeout,
    )


def _write_reports(args: argparse.Namespace, result: RunResult) -> None:
    from conformance.reporting import write_html, write_json, write_junit

    if args.json:
        write_json(result, args.json)
    if args.junit_xml:
        write_junit(result, args.junit_xml)
    if args.html:
        write_html(result, args.html)


def _unreachable(result: RunResult) -> bool:
    exchanges = list(result.exchanges.values())
    return bool(exchanges) and all(e.termination is Termination.CONNECT_ERROR for e in exchanges)


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from conformance.reporting import ConsoleProgress, write_console

    rules = CATALOG.select(
        profile=pick_profile(args.profile, args.base_url).name,
        select=split_list(args.select),
        deselect=split_list(args.deselect),
    )
    if not rules:
        raise UsageError("no rule matches --select / --deselect for this profile")
    progress = ConsoleProgress(err, enabled=not args.quiet)
    mock = None if args.base_url else EmbeddedMock()
    try:
        if mock is not None:
            if not args.quiet:
                err.write("conformance: starting the embedded mock server\n")
            mock.start()
        discovery: list[Exchange] = []
        settings = asyncio.run(_prepare(args, args.base_url or "", mock, discovery))
        result = asyncio.run(
            execute(settings, rules, progress=progress, strict=args.strict,
                    embedded=mock is not None)
        )
        if discovery:  # kept in the report: a replay of it must answer the discovery too
            exchanges = {DISCOVERY_LABEL: discovery[-1], **result.exchanges}
            result = dataclasses.replace(result, exchanges=exchanges)
    finally:
        if mock is not None:
            mock.stop()
    if _unreachable(result):
        raise HarnessError(f"cannot connect to {result.target.base_url}")
    write_console(result, out, verbose=args.verbose)
    _write_reports(args, result)
    return result.exit_code


def main(argv: Sequence[str] | None = None, out: TextIO | None = None,
         err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    args = _parser().parse_args(argv)
    try:
        if args.command == "list":
            return _list(args, out)
        if args.command == "fuzz":
            from conformance.fuzz.cli import run as run_fuzz

            return run_fuzz(args, out, err)
        return _run(args, out, err)
    except (UsageError, HarnessError, EmbeddedMockError, OSError) as exc:
        err.write(f"conformance: error: {exc}\n")
        return 2
    except KeyboardInterrupt:
        err.write("conformance: interrupted\n")
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
