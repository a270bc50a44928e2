"""The OpenAPI document narrowed to one profile, for generators such as schemathesis.

Schemathesis generates from a whole OpenAPI document, not from a standalone JSON Schema; so a
fuzz run for a profile needs a document that holds only that profile's operations (its
``operations``: path, method and operationId) and whose request body lists only the profile's
fields. An operation is found by its method and operationId and placed at the profile's path,
so a vendor serving ``createCompletion`` at ``/api/v2/completions`` is fuzzed there. Everything
else is the shipped document, unchanged.
"""

from __future__ import annotations

from .document import JSON, load_document
from .profiles import Profile, get_profile

SCHEMAS = "#/components/schemas/"


def profile_document(name: str) -> dict[str, JSON]:
    """A copy of the document with only profile ``name``'s operations and request fields."""
    profile = get_profile(name)
    document = load_document()
    by_id = {
        (method.lower(), operation.get("operationId")): operation
        for item in document["paths"].values()
        for method, operation in item.items()
        if isinstance(operation, dict)
    }
    paths: dict[str, dict[str, JSON]] = {}
    for op in profile.operations.values():
        operation = by_id.get((op.method.lower(), op.operation_id))
        if operation is None:
            raise ValueError(f"profile {name!r}: the contract has no {op.method.upper()} "
                             f"operation {op.operation_id!r} (spec/completions.yaml)")
        paths.setdefault(op.path, {})[op.method.lower()] = operation
    document["paths"] = dict(paths)
    _own_answers(document, profile)
    _own_request(document, profile)
    request = document["components"]["schemas"][profile.schema_names["request"]]
    request["properties"] = {
        field: request["properties"][field] for field in profile.request_fields
    }
    request["required"] = list(profile.required_fields)
    request["additionalProperties"] = False
    document["info"]["title"] += f" (profile {name})"
    return document


def _own_request(document: dict[str, JSON], profile: Profile) -> None:
    """The completions operation's request body in the profile's own request schema: the
    shipped path gives OpenAI's ``CompletionRequest``, and a vendor's schema (vLLM's, whose
    extra fields and own limits the fuzzer must draw from) names no path of its own."""
    op = profile.operations.get("completions")
    operation = document["paths"].get(op.path, {}).get(op.method.lower()) if op else None
    if not isinstance(operation, dict):
        return
    content = operation.get("requestBody", {}).get("content", {}).get("application/json")
    if isinstance(content, dict):
        content["schema"] = {"$ref": SCHEMAS + profile.schema_names["request"]}


def _own_answers(document: dict[str, JSON], profile: Profile) -> None:
    """The answers of ``profile``'s completions operation in the profile's own schemas: its
    response and event stream for a 200, its error envelope for every error status and for an
    error event inside a stream. The shipped paths give OpenAI's (``ErrorResponse``, whose
    ``code`` is a string); vLLM's ``ErrorInfo`` has an integer ``code``
    (https://github.com/vllm-project/vllm/blob/ec3b890c14b00f6670515d9df8d503b5270e95ca/vllm/entrypoints/openai/protocol.py),
    which its profile's ``LenientErrorResponse`` takes, in a body and in a stream alike."""
    names = profile.schema_names
    op = profile.operations.get("completions")
    operation = document["paths"].get(op.path, {}).get(op.method.lower()) if op else None
    if isinstance(operation, dict):
        content = operation["responses"].get("200", {}).get("content", {})
        for media, name in (("application/json", "response"),
                            ("text/event-stream", "event_stream")):
            if media in content and name in names:
                content[media]["schema"] = {"$ref": SCHEMAS + names[name]}
    error = names.get("error")
    if error is None or error == "ErrorResponse":
        return
    schemas = document["components"]["schemas"]
    targets = [document["components"]["responses"]]
    if "event_stream" in names:
        targets.append(schemas[names["event_stream"]])
    for target in targets:
        _swap(target, SCHEMAS + "ErrorResponse", SCHEMAS + error)


def _swap(node: JSON, old: str, new: str) -> None:
    """Every ``{"$ref": old}`` under ``node`` made ``{"$ref": new}``, in place."""
    if isinstance(node, dict):
        if node.get("$ref") == old:
            node["$ref"] = new
        for value in node.values():
            _swap(value, old, new)
    elif isinstance(node, list):
        for item in node:
            _swap(item, old, new)
