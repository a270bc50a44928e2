"""``python -m mockserver.render '<request JSON>'``: what the mock would answer, without a server.

Prints the non-streamed response body exactly as the mock returns it, or with ``--stream`` the
SSE events exactly as the mock frames them. The request is validated like the mock does it
(the contract's JSON Schema, its cross-field rules, then the engine), so errors match too.

The wire format is the mock's job (``mockserver.wire``, a pure module without aiohttp): this
command is a front end of it, so the two can never disagree, and the engine, which knows no
JSON, has no command of its own. Response ids and
timestamps are fixed here (``--id``, ``--created``) so that the output is reproducible byte for
byte; the mock draws them per request.
"""

from __future__ import annotations

import argparse
import json
import sys

from mockserver.offline import offline_answer


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m mockserver.render",
        description="Run one completion request through the reference engine and print the "
        "response exactly as the mock server would send it.",
    )
    parser.add_argument("request", help="the request body as JSON, or - to read it from stdin")
    parser.add_argument("--stream", action="store_true",
                        help="print the SSE stream (the request's own `stream` field is ignored)")
    parser.add_argument("--profile", choices=["openai", "friendli"], default="openai",
                        help="wire format: openai (/v1/completions) or friendli "
                        "(/dedicated/v1/completions); default openai")
    parser.add_argument("--id", default="cmpl-reference", help="response id to print")
    parser.add_argument("--created", type=int, default=0, help="`created` timestamp to print")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    raw = sys.stdin.read() if args.request == "-" else args.request
    try:
        body = json.loads(raw)
    except json.JSONDecodeError as error:
        print(f"error: the request is not valid JSON: {error}", file=sys.stderr)
        return 2
    try:
        sys.stdout.write(offline_answer(body, profile_name=args.profile, stream=args.stream,
                                    response_id=args.id, created=args.created))
    except ValueError as error:  # an invalid request, explained like the mock's error envelope
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
