"""The OpenAPI documents a fuzz run generates from, both taken from ``spec.profile_document``.

Paths are made relative to the profile's base path (``/v1/completions`` becomes
``/completions``), and schemathesis is given the base URL as an OpenAI client takes it
(``https://host/prefix/v1``): a server behind any prefix is fuzzed where its client would call it.

Schemathesis mixes a document's examples into the strategies of its coverage and fuzzing
phases. Hypothesis then shrinks a failing case towards the simplest choice it can make, which
is an example, so a fault any example triggers is reported with that example, not with the
smallest request that shows it. The run therefore has two passes: the examples phase on the
document as shipped (its examples are good first requests), then coverage and fuzzing on the
same document without examples, where shrinking reaches the smallest reproduction.
"""

from __future__ import annotations

import copy

import spec
from spec import JSON

EXAMPLE_KEYS = frozenset({"example", "examples"})


def relative_path(profile: spec.Profile, path: str) -> str:
    """``path`` below the profile's base path: ``/dedicated/v1/completions`` -> ``/completions``."""
    base = profile.base_path.rstrip("/")
    return path[len(base):] if base and path.startswith(base + "/") else path


def fuzz_document(profile_name: str) -> dict[str, JSON]:
    """The document of the profile ``profile_name`` (its operations and request fields only),
    paths relative to the base path, no ``servers`` (the run says where the server is)."""
    chosen = spec.get_profile(profile_name)
    document = spec.profile_document(profile_name)
    document["paths"] = {relative_path(chosen, path): item
                         for path, item in document["paths"].items()}
    document.pop("servers", None)
    return document


def without_examples(document: dict[str, JSON]) -> dict[str, JSON]:
    """A copy of ``document`` with every ``example`` / ``examples`` keyword removed (a property
    that happens to be named ``examples`` is kept)."""
    stripped = copy.deepcopy(document)
    _strip(stripped, parent=None)
    return stripped


def _strip(node: JSON, *, parent: str | None) -> None:
    if isinstance(node, dict):
        for key in list(node):
            if key in EXAMPLE_KEYS and parent != "properties":
                del node[key]
            else:
                _strip(node[key], parent=key)
    elif isinstance(node, list):
        for item in node:
            _strip(item, parent=None)
