"""Content types of streamed, non-streamed and error responses.

Spec: the ``200`` response of ``POST /v1/completions`` in ``spec/completions.yaml`` has
``application/json`` and ``text/event-stream`` media types, and every error response
``application/json``; WHATWG HTML §9.2: event streams "must be served as
``text/event-stream``".
"""

from __future__ import annotations

from conformance.check_context import CheckContext
from conformance.model import NotApplicable, Violation

from .base import BUGS, DOC, MUST, SPEC, rule
from .common import responses, streams

JSON_TYPES = ("application/json",)


@rule(
    "CONTENT-TYPE-001", MUST, "Streams are text/event-stream",
    requirement="A streamed response (stream: true) has Content-Type text/event-stream.",
    citation=f"{DOC}#/paths/~1v1~1completions/post/responses/200/content; {BUGS} #11",
    source=SPEC, probes=("greedy",), faults=("content-type-wrong",), scan=True,
)
def streams_are_event_streams(ctx: CheckContext) -> None:
    for label, _, view in streams(ctx):
        if view.exchange.media_type != "text/event-stream":
            raise Violation(
                "a streamed response is not labelled text/event-stream",
                expected="text/event-stream", actual=view.exchange.header("Content-Type"),
                path="headers.Content-Type", exchange=label,
                evidence=f"Content-Type: {view.exchange.header('Content-Type')}",
            )


@rule(
    "CONTENT-TYPE-002", MUST, "Non-streamed responses are application/json",
    requirement="A non-streamed completion (stream false or absent) has Content-Type "
    "application/json.",
    citation=f"{DOC}#/paths/~1v1~1completions/post/responses/200/content; {BUGS} #11",
    source=SPEC, probes=("greedy",), faults=("content-type-json-wrong",), scan=True,
)
def bodies_are_json(ctx: CheckContext) -> None:
    for label, _, exchange, _ in responses(ctx):
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
