"""The identity of a response: ``id``, ``created``, ``model`` and ``object``.

Spec: ``CompletionChunk`` in ``spec/completions.yaml`` ("It has the same shape as
``CompletionResponse`` (the OpenAI spec says so)"; ``object: {const: text_completion}``);
every chunk of one stream belongs to one completion. FriendliAI's ``created`` is "Unix time in
seconds when the token was sampled", so it may change between FriendliAI chunks. Bug classes 1
and 34.
"""

from __future__ import annotations

from conformance.model import Violation
from conformance.run.check_context import CheckContext
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


BODY_OBJECTS = frozenset({"text_completion", "completion"})
"""What a non-streamed body's ``object`` may be: OpenAI's document says ``text_completion``, and
the API also answered ``completion`` (gpt-4o-mini on /v1/completions, 2025-09-15, recorded in
https://github.com/DataDog/dd-trace-js/blob/705ad31879385abe28f193e456dba7a8f9c58564/packages/dd-trace/test/llmobs/cassettes/openai/openai_completions_post_ece8d3b2.yaml,
kept in tests/fixtures/openai-recordings/). No recorded chunk says anything but
``text_completion``."""


@rule(
    "IDENTITY-004", MUST, "object is text_completion",
    requirement='Every chunk has object "text_completion", and every completion body '
    '"text_completion" or "completion" (what the real API answered for gpt-4o-mini, 2025).',
    citation=f"{SCHEMAS}/CompletionResponse/properties/object; {BUGS} #34",
    source=SPEC, probes=("greedy",), faults=("object-wrong",), scan=True,
)
def object_is_text_completion(ctx: CheckContext) -> None:
    for label, _, exchange, body in responses(ctx):
        if isinstance(body, dict) and body.get("object") not in BODY_OBJECTS:
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
