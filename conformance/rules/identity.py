"""The identity of a response: ``id``, ``created``, ``model`` and ``object``.

Spec: ``CompletionChunk`` in ``spec/completions.yaml`` ("It has the same shape as
``CompletionResponse`` (the OpenAI spec says so)"; ``object: {const: text_completion}``);
every chunk of one stream belongs to one completion. FriendliAI's ``created`` is "Unix time in
seconds when the token was sampled", so it may change between FriendliAI chunks. Bug classes 1
and 34.
"""

from __future__ import annotations

from conformance.check_context import CheckContext
from conformance.model import Violation
from conformance.views import StreamView, raw_text
from spec import JSON

from .base import BUGS, MUST, OPENAI_WIRE, SCHEMAS, SPEC, rule
from .common import responses, sound_streams


def _same_everywhere(ctx: CheckContext, field: str, *, non_empty: bool = False) -> None:
    for label, _, view in sound_streams(ctx):
        _check_stream(view, label, field, non_empty)


def _check_stream(view: StreamView, label: str, field: str, non_empty: bool) -> None:
    payloads = view.objects
    if not payloads:
        return
    first: JSON = payloads[0].value.get(field)
    if non_empty and (not isinstance(first, str) or not first):
        raise Violation(
            f"the stream's {field} is empty", expected=f"a non-empty {field}",
            actual=first, path=field, exchange=label,
            evidence=raw_text(payloads[0].event.raw),
        )
    for payload in payloads[1:]:
        value = payload.value.get(field)
        if value != first:
            raise Violation(
                f"{field} changes within the stream (event {payload.position})",
                expected=first, actual=value, path=field, exchange=label,
                evidence=raw_text(payload.event.raw),
            )


@rule(
    "IDENTITY-001", MUST, "One non-empty id per stream",
    requirement="Every chunk of a stream, the usage chunk included, carries the same non-empty "
    "id.",
    citation=f"{SCHEMAS}/CompletionChunk/properties/id; {BUGS} #1",
    source=SPEC, probes=("greedy",), faults=("id-changes",), scan=True,
)
def same_id(ctx: CheckContext) -> None:
    _same_everywhere(ctx, "id", non_empty=True)


@rule(
    "IDENTITY-002", MUST, "One created per stream",
    requirement="Every chunk of an OpenAI-style stream carries the same created timestamp.",
    citation=f"{SCHEMAS}/CompletionChunk/properties/created",
    source=SPEC, probes=("greedy",), traits=OPENAI_WIRE, faults=("created-changes",),
    scan=True,
)
def same_created(ctx: CheckContext) -> None:
    _same_everywhere(ctx, "created")


@rule(
    "IDENTITY-003", MUST, "One model per stream",
    requirement="Every chunk of a stream names the same model.",
    citation=f"{SCHEMAS}/CompletionChunk/properties/model",
    source=SPEC, probes=("greedy",), faults=("model-changes",), scan=True,
)
def same_model(ctx: CheckContext) -> None:
    _same_everywhere(ctx, "model")


@rule(
    "IDENTITY-004", MUST, "object is text_completion",
    requirement='Every completion body and every chunk has object "text_completion".',
    citation=f"{SCHEMAS}/CompletionResponse/properties/object; {BUGS} #34",
    source=SPEC, probes=("greedy",), faults=("object-wrong",), scan=True,
)
def object_is_text_completion(ctx: CheckContext) -> None:
    for label, _, exchange, body in responses(ctx):
        if isinstance(body, dict) and body.get("object") != "text_completion":
            raise Violation(
                "the response's object is not text_completion",
                expected="text_completion", actual=body.get("object"), path="object",
                exchange=label, evidence=raw_text(exchange.body),
            )
    for label, _, view in sound_streams(ctx):
        for payload in view.objects:
            if payload.value.get("object") != "text_completion":
                raise Violation(
                    f"event {payload.position}'s object is not text_completion",
                    expected="text_completion", actual=payload.value.get("object"),
                    path="object", exchange=label, evidence=raw_text(payload.event.raw),
                )
