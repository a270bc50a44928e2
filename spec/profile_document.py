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
from .profiles import get_profile


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
    request = document["components"]["schemas"][profile.schema_names["request"]]
    request["properties"] = {
        field: request["properties"][field] for field in profile.request_fields
    }
    request["required"] = list(profile.required_fields)
    request["additionalProperties"] = False
    document["info"]["title"] += f" (profile {name})"
    return document
