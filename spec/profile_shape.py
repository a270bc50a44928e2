"""The shape of a profile file, checked against ``spec/profile.schema.yaml`` before it is read.

A vendor's profile is one YAML file written by hand; a slip (``invalid_request: 422`` where a
list of statuses belongs, a misspelt key) is reported with the key path and the file, as in
``profile vendor.yaml: errors.invalid_request: 422 is not of type 'array'``, instead of a
``TypeError`` from deep inside the loader.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from importlib import resources

import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from .document import JSON

SCHEMA_NAME = "profile.schema.yaml"


@functools.cache
def profile_schema() -> dict[str, JSON]:
    """The JSON Schema (Draft 2020-12) every profile file follows."""
    text = resources.files(__package__).joinpath(SCHEMA_NAME).read_text("utf-8")
    loaded: dict[str, JSON] = yaml.safe_load(text)
    return loaded


@functools.cache
def _validator() -> Draft202012Validator:
    return Draft202012Validator(profile_schema())


def check_profile_shape(raw: JSON, *, source: str) -> None:
    """Raise ``ValueError`` naming ``source`` and the key path of the most relevant violation
    of the profile schema (a missing or misplaced key before a wrong value deep inside)."""
    error = best_match(_validator().iter_errors(raw))
    if error is None:
        return
    where = key_path(error.absolute_path)
    raise ValueError(f"profile {source}: {where + ': ' if where else ''}{error.message}")


def key_path(parts: Iterable[str | int]) -> str:
    """``errors.invalid_request``, ``request_fields[2]``: how a reader finds the key."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f"{'.' if text else ''}{part}"
    return text
