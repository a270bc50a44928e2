"""Schema validity of completion bodies and stream chunks (JSON Schema from ``spec/``).

Spec: ``CompletionResponse``, ``CompletionChunk`` and ``UsageChunk`` (FriendliAI:
``FriendliCompletionResponse``, ``FriendliCompletionChunk``, ``FriendliUsageChunk``) in
``spec/completions.yaml``, through ``spec.get_profile(name).validator(role)``.

Fields whose meaning more specific rules judge are left to them, so that one defect is reported
once: ``object`` (IDENTITY-004), ``finish_reason`` (FINISH-001 / FINISH-003), the presence of
``usage`` in a body (USAGE-010 / USAGE-011).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from jsonschema.exceptions import ValidationError

from conformance.contract.fastschema import surely_valid
from conformance.model import Violation
from conformance.run.check_context import CheckContext
from conformance.views import compact, json_path, raw_text
from conformance.wire_json import parse_json
from spec import JSON

from .base import MUST, SCHEMAS, SPEC, rule
from .common import event_streams, responses

Path = Sequence[str | int]


def _owned(path: Path) -> bool:
    """Paths another rule judges (see the module docstring)."""
    if list(path) == ["object"]:
        return True
    if len(path) == 3 and path[0] == "choices" and path[2] == "finish_reason":
        return True
    return list(path) == ["usage"]


def _effective_path(error: ValidationError) -> list[str | int]:
    path: list[str | int] = list(error.absolute_path)
    if error.validator == "required" and isinstance(error.instance, dict):
        missing = [
            name for name in error.validator_value if name not in error.instance
        ]
        if len(missing) == 1:
            path.append(missing[0])
    return path


def schema_problems(ctx: CheckContext, role: str, value: JSON) -> Iterator[tuple[str, str]]:
    """``(json path, message)`` of each schema error not owned by another rule."""
    if surely_valid(ctx.profile.name, role, value):
        return
    validator = ctx.profile.validator(role)  # type: ignore[arg-type]
    for error in validator.iter_errors(value):
        path = _effective_path(error)
        if _owned(path):
            continue
        yield json_path(path), error.message


def _not_an_object(body: bytes) -> str:
    """Why a body is not a JSON object."""
    try:
        value = parse_json(body)
    except ValueError as exc:
        return f"not JSON ({exc})"
    return f"a JSON {type(value).__name__}"


@rule(
    "SCHEMA-001", MUST, "Completion bodies and chunks match the schema",
    requirement="Every non-streamed completion validates against the profile's response "
    "schema, every stream chunk against its chunk schema and the usage chunk against its "
    "usage-chunk schema.",
    citation=f"{SCHEMAS}/CompletionResponse, CompletionChunk, UsageChunk (FriendliAI: "
    "FriendliCompletionResponse, FriendliCompletionChunk, FriendliUsageChunk)",
    source=SPEC, probes=("greedy",), faults=("choice-seed-missing", "field-wrong-type"),
    scan=True,
)
def bodies_match_schema(ctx: CheckContext) -> None:
    """A body that is not a JSON object (not JSON at all, or nested deeper than the harness
    reads: :mod:`conformance.wire_json`) matches no response schema. Each chunk is judged by
    itself, so the chunks of a stream cut by a limit are judged as seen (:func:`event_streams`);
    a stream whose events cannot be read as chunks is the SSE rules'."""
    for label, _, exchange, body in responses(ctx, objects=False):
        if not isinstance(body, dict):
            problem = _not_an_object(exchange.body)
            raise Violation(
                f"the response is not a JSON object: {problem}",
                expected=f"a valid {ctx.profile.schema_names['response']}",
                actual=problem, path="$", exchange=label,
                evidence=raw_text(exchange.body[:400]),
            )
        for path, message in schema_problems(ctx, "response", body):
            raise Violation(
                f"the response does not match the schema: {message}",
                expected=f"a valid {ctx.profile.schema_names['response']}",
                actual=message, path=path, exchange=label, evidence=raw_text(exchange.body),
            )
    for label, _, view in event_streams(ctx, chunks=True):
        for payload in view.objects:
            role = "usage_chunk" if payload.kind == "usage" else "chunk"
            if role == "usage_chunk" and payload.value.get("choices") != []:
                continue  # a usage chunk with choices: USAGE-004's defect
            for path, message in schema_problems(ctx, role, payload.value):
                raise Violation(
                    f"event {payload.position} does not match the {role} schema: {message}",
                    expected=f"a valid {ctx.profile.schema_names[role]}",
                    actual=compact(payload.value), path=path, exchange=label,
                    evidence=raw_text(payload.event.raw),
                )
