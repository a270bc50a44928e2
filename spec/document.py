"""Loading the contract: the OpenAPI 3.1 document in ``spec/completions.yaml``.

The document is parsed once per process and handed out as deep copies, so no caller can change
what another caller sees. ``document_bytes`` gives the file exactly as shipped, which is what the
mock serves at ``/openapi.yaml``: the document it serves is the one it validates with.
"""

from __future__ import annotations

import copy
import functools
import json
from importlib import resources
from typing import Any

import yaml

JSON = Any
"""A JSON value (the parsed document is plain dicts, lists, strings, numbers, bools, None)."""

DOCUMENT_NAME = "completions.yaml"


@functools.cache
def document_bytes() -> bytes:
    """The contract's YAML source, byte for byte."""
    return resources.files(__package__).joinpath(DOCUMENT_NAME).read_bytes()


@functools.cache
def _parsed() -> dict[str, JSON]:
    loaded = yaml.safe_load(document_bytes())
    if not isinstance(loaded, dict) or not str(loaded.get("openapi", "")).startswith("3.1"):
        raise ValueError(f"{DOCUMENT_NAME} is not an OpenAPI 3.1 document")
    return loaded


def load_document() -> dict[str, JSON]:
    """The parsed OpenAPI document (a fresh deep copy: mutate it freely)."""
    return copy.deepcopy(_parsed())


@functools.cache
def document_json() -> bytes:
    """The document as JSON (for ``/openapi.json``), keys in document order."""
    return json.dumps(_parsed(), ensure_ascii=False, indent=1).encode("utf-8")


def component(name: str) -> dict[str, JSON]:
    """A copy of ``#/components/schemas/<name>``, its ``$ref``s left as they are."""
    schemas = _parsed()["components"]["schemas"]
    if name not in schemas:
        raise KeyError(f"no schema named {name!r} in {DOCUMENT_NAME}; known: {sorted(schemas)}")
    return copy.deepcopy(schemas[name])


def extension(key: str) -> JSON:
    """A copy of a top-level ``x-`` extension of the document, e.g. ``x-cross-field-rules``."""
    if not key.startswith("x-"):
        raise KeyError(f"{key!r} is not an extension key (they start with 'x-')")
    return copy.deepcopy(_parsed().get(key))


def component_names() -> list[str]:
    """Names of every schema under ``#/components/schemas``."""
    return list(_parsed()["components"]["schemas"])
