"""The OpenAPI document narrowed to one profile, for generators such as schemathesis.

Schemathesis generates from a whole OpenAPI document, not from a standalone JSON Schema; so a
fuzz run for a profile needs a document that holds only that profile's operations (its
``operations``: path, method and operationId) and whose request body lists only the profile's
fields. Everything else is
the shipped document, unchanged.
"""

from __future__ import annotations

from .document import JSON, load_document
from .profiles import get_profile


def profile_document(name: str) -> dict[str, JSON]:
    """A copy of the document with only profile ``name``'s operations and request fields."""
    profile = get_profile(name)
    document = load_document()
    paths: dict[str, JSON] = {}
    served = {(op.path, op.method.lower(), op.operation_id) for op in profile.operations.values()}
    for path, item in document["paths"].items():
        kept = {
            method: operation
            for method, operation in item.items()
            if isinstance(operation, dict)
            and (path, method.lower(), operation.get("operationId")) in served
        }
        if kept:
            paths[path] = kept
    document["paths"] = paths
    request = document["components"]["schemas"][profile.schema_names["request"]]
    request["properties"] = {
        field: request["properties"][field] for field in profile.request_fields
    }
    request["required"] = list(profile.required_fields)
    request["additionalProperties"] = False
    document["info"]["title"] += f" (profile {name})"
    return document
