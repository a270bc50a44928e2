"""Content types of streamed, non-streamed and error responses.

Spec: the ``200`` response of ``POST /v1/completions`` in ``spec/completions.yaml`` has
``application/json`` and ``text/event-stream`` media types, and every error response
``application/json``; WHATWG HTML §9.2: event streams "must be served as
``text/event-stream``".
"""

from __future__ import annotations

from collections.abc import Iterator

from conformance.model import NotApplicable, Violation
from conformance.run.check_context import CheckContext
from conformance.transport import Exchange
from spec import JSON

from .base import BUGS, DOC, MUST, SPEC, rule
from .common import streams

JSON_TYPES = ("application/json",)


@rule(
    "CONTENT-TYPE-001", MUST, "Streams are text/event-stream",
    requirement="A streamed response (stream: true) has Content-Type text/event-stream.",
    citation=f"{DOC}#/paths/~1v1~1completions/post/responses/200/content; {BUGS} #11",
    source=SPEC, probes=("greedy",), faults=("content-type-wrong",), scan=True,
)
def streams_are_event_streams(ctx: CheckContext) -> None:
    """Judges the headers, seen whole however the stream ended."""
    for label, _, view in streams(ctx):
        if view.exchange.media_type != "text/event-stream":
            raise Violation(
                "a streamed response is not labelled text/event-stream",
                expected="text/event-stream", actual=view.exchange.header("Content-Type"),
                path="headers.Content-Type", exchange=label,
                evidence=f"Content-Type: {view.exchange.header('Content-Type')}",
            )


def _answers(ctx: CheckContext) -> Iterator[tuple[str, JSON, Exchange]]:
    """Every 200 answer to a valid non-streamed completion request, however its body ended."""
    for label, body, exchange in ctx.scanned():
        if exchange.status != 200 or (isinstance(body, dict) and body.get("stream") is True):
            continue
        ctx.judge(label)
        yield label, body, exchange


@rule(
    "CONTENT-TYPE-002", MUST, "Non-streamed responses are application/json",
    requirement="A non-streamed completion (stream false or absent) has Content-Type "
    "application/json.",
    citation=f"{DOC}#/paths/~1v1~1completions/post/responses/200/content; {BUGS} #11",
    source=SPEC, probes=("greedy",), faults=("content-type-json-wrong",), scan=True,
)
def bodies_are_json(ctx: CheckContext) -> None:
    """Judges the headers of every 200 answer, however its body ended: an event stream cut by
    a limit answering a non-streamed request fails here."""
    for label, _, exchange in _answers(ctx):
        if exchange.media_type not in JSON_TYPES:
            raise Violation(
                "a non-streamed completion is not labelled application/json",
                expected="application/json", actual=exchange.header("Content-Type"),
                path="headers.Content-Type", exchange=label,
                evidence=f"Content-Type: {exchange.header('Content-Type')}",
            )


@rule(
    "CONTENT-TYPE-003", MUST, "Errors are application/json",
    requirement="An error response (4xx or 5xx) to a completion request has Content-Type "
    "application/json, streamed request or not.",
    citation=f"{DOC}#/components/responses/BadRequest",
    source=SPEC, probes=("invalid",), faults=("error-no-envelope",), fuzz="invalid",
)
def errors_are_json(ctx: CheckContext) -> None:
    outcome = ctx.outcome("invalid")
    for key in sorted(outcome.invalid):
        try:
            exchange = ctx.exchange("invalid", key)
        except NotApplicable:
            continue  # refused as a whole: nothing to judge in it
        if exchange.status is None or exchange.status < 400:
            continue
        if exchange.media_type not in JSON_TYPES:
            raise Violation(
                f"the HTTP {exchange.status} error is not labelled application/json",
                expected="application/json", actual=exchange.header("Content-Type"),
                path="headers.Content-Type", exchange=outcome.label(key),
                evidence=f"Content-Type: {exchange.header('Content-Type')}",
            )
