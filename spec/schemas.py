"""Standalone JSON Schemas (Draft 2020-12) cut out of the OpenAPI document.

OpenAPI 3.1 schemas are JSON Schema 2020-12, but they point at each other with
``#/components/schemas/X``. ``standalone_schema`` copies a component together with every
component it reaches into ``$defs`` and rewrites the pointers to ``#/$defs/X``, so the result
validates on its own with ``jsonschema`` and never needs the document again.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.protocols import Validator

from .document import JSON, component

_COMPONENT_PREFIX = "#/components/schemas/"
DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _refs(node: JSON) -> Iterator[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_COMPONENT_PREFIX):
            yield ref[len(_COMPONENT_PREFIX) :]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def to_defs_refs(node: JSON) -> JSON:
    """Rewrite ``#/components/schemas/X`` pointers in ``node`` to ``#/$defs/X``."""
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith(_COMPONENT_PREFIX):
                out[key] = "#/$defs/" + value[len(_COMPONENT_PREFIX) :]
            else:
                out[key] = to_defs_refs(value)
        return out
    if isinstance(node, list):
        return [to_defs_refs(item) for item in node]
    return node


def reachable_components(node: JSON) -> list[str]:
    """Every component ``node`` references, transitively, in discovery order."""
    seen: list[str] = []
    pending = list(_refs(node))
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.append(current)
        pending.extend(ref for ref in _refs(component(current)) if ref not in seen)
    return seen


def make_standalone(fragment: dict[str, JSON]) -> dict[str, JSON]:
    """A self-contained Draft 2020-12 schema for a schema fragment of the document.

    The fragment's component references become ``$defs`` entries.
    """
    root = to_defs_refs(fragment)
    if not isinstance(root, dict):
        raise TypeError("a schema fragment must be a mapping")
    schema: dict[str, JSON] = {"$schema": DIALECT, **root}
    defs = {name: to_defs_refs(component(name)) for name in reachable_components(fragment)}
    if defs:
        schema["$defs"] = defs
    return schema


def standalone_schema(name: str, *, patch: dict[str, JSON] | None = None) -> dict[str, JSON]:
    """A self-contained Draft 2020-12 schema for the component ``name``.

    ``patch`` replaces top-level keywords of the root schema (profiles use it to narrow the
    request's ``properties`` and set ``additionalProperties``).
    """
    fragment = component(name)
    if patch:
        fragment.update(patch)
    return make_standalone(fragment)


def validator_for(schema: dict[str, JSON]) -> Validator:
    """A Draft 2020-12 validator for ``schema`` (checked once, reused by the caller)."""
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


@functools.cache
def _component_validator(name: str) -> Validator:
    return validator_for(standalone_schema(name))


def component_validator(name: str) -> Validator:
    """A cached validator for the component ``name`` as the document defines it."""
    return _component_validator(name)
