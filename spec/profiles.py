"""Profiles: which part of the contract applies to which kind of server.

A profile (``spec/profiles/<name>.yaml``) names the operations a server serves, the request
fields it must accept, whether it rejects unknown fields, the schemas its responses, chunks and
errors follow, the status codes it answers invalid input with, and the optional features it
claims (``spec/features.yaml`` lists them all). The mock serves profiles; the harness checks a
server against one.
"""

from __future__ import annotations

import copy
import functools
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Literal

import yaml
from jsonschema.protocols import Validator

from .document import JSON, component
from .profile_shape import check_profile_shape
from .schemas import standalone_schema, validator_for

SchemaRole = Literal[
    "request", "response", "chunk", "usage_chunk", "event_stream", "error", "models"
]
UnknownFields = Literal["reject", "ignore"]
Wire = Literal["openai", "friendli"]


@dataclass(frozen=True)
class Operation:
    """One HTTP operation of a profile, e.g. ``POST /v1/completions``."""

    path: str
    method: str
    operation_id: str


@dataclass(frozen=True)
class Profile:
    """A machine-readable profile; build it with :func:`get_profile`."""

    name: str
    title: str
    description: str
    source: str
    base_path: str
    operations: Mapping[str, Operation]
    schema_names: Mapping[str, str]
    request_fields: tuple[str, ...]
    required_fields: tuple[str, ...]
    unknown_fields: UnknownFields
    invalid_request_statuses: tuple[int, ...]
    unauthorized_status: int
    unknown_model_statuses: tuple[int, ...]
    usage_key_on_chunks: str
    limits: Mapping[str, int | None]
    features: frozenset[str]
    headers: Mapping[str, str] = field(default_factory=dict)
    defaultable_fields: tuple[str, ...] = ()
    """Required string fields a server may fill in itself when a request leaves them out (a
    single-model server defaults ``model``): such a request may be accepted or rejected."""
    wire: Wire = "openai"
    """The shapes on the wire: OpenAI's (``echo``, ``created``, ``text_offset`` ...) or
    FriendliAI's (``tokens`` prompts, per-chunk ``token``, per-choice ``seed``)."""
    finish_reasons: tuple[str, ...] = ("stop", "length", "content_filter")
    finish_key_on_chunks: str = "null"
    """``null``: every stream choice carries ``finish_reason`` (null until its last chunk);
    ``null_or_absent``: a choice may leave the key out until then."""
    text_offsets: str = "from_prompt"
    """Where ``logprobs.text_offset`` counts from: ``from_prompt`` (OpenAI), or
    ``from_prompt_or_completion`` (vLLM counts from the completion's start)."""
    openai_limits: str = "required"
    """``required``: OpenAI's limits (logprobs <= 5, 4 stop strings, best_of <= 20) are part of
    the schema; ``recommended``: a server may raise them (vLLM allows 20 logprobs), so going
    beyond them is a SHOULD; ``own``: the profile's request schema states the server's own
    limits (the ``vllm`` profile: 20 logprobs, any number of stop strings), and OpenAI's are not
    judged at all."""

    def traits(self) -> frozenset[str]:
        """What rules and probes select a profile by (``wire=openai``, ``unknown_fields=reject``,
        ``operation=models``, ...): attributes, never the profile's name, so a new vendor's
        profile is one YAML file."""
        values = {
            "wire": self.wire,
            "unknown_fields": self.unknown_fields,
            "usage_key_on_chunks": self.usage_key_on_chunks,
            "text_offsets": self.text_offsets,
            "openai_limits": self.openai_limits,
        }
        found = {f"{key}={value}" for key, value in values.items()}
        return frozenset(found | {f"operation={name}" for name in self.operations})

    def has_traits(self, traits: Iterable[str]) -> bool:
        return set(traits) <= self.traits()

    @property
    def completions_path(self) -> str:
        return self.operations["completions"].path

    @property
    def models_path(self) -> str | None:
        models = self.operations.get("models")
        return models.path if models else None

    def claims(self, feature: str) -> bool:
        """Whether the profile claims an optional feature (see ``spec/features.yaml``)."""
        if feature not in all_features():
            raise KeyError(f"unknown feature {feature!r}; known: {sorted(all_features())}")
        return feature in self.features

    def schema(self, role: SchemaRole) -> dict[str, JSON]:
        """A standalone Draft 2020-12 JSON Schema for ``role`` under this profile.

        The request schema keeps only the profile's ``request_fields`` (and no others: it says
        what a client of this profile sends; ``unknown_fields`` says how the server may treat
        fields outside it).
        """
        return _profile_schema(self.name, role)

    def validator(self, role: SchemaRole) -> Validator:
        """A cached ``jsonschema`` validator for :meth:`schema`."""
        return _profile_validator(self.name, role)


def _request_patch(profile: Profile) -> dict[str, JSON]:
    base = component(profile.schema_names["request"])
    properties = base.get("properties", {})
    missing = [name for name in profile.request_fields if name not in properties]
    if missing:
        raise ValueError(
            f"profile {profile.name!r} names request fields the schema lacks: {missing}"
        )
    # Always closed: the schema describes what to send, and we never send unknown fields on
    # purpose. `unknown_fields` says how a server may answer one (reject, or ignore).
    return {
        "properties": {name: properties[name] for name in profile.request_fields},
        "required": list(profile.required_fields),
        "additionalProperties": False,
    }


@functools.cache
def _profile_schema_cached(name: str, role: str) -> dict[str, JSON]:
    profile = get_profile(name)
    schema_name = profile.schema_names.get(role)
    if schema_name is None:
        raise KeyError(f"profile {name!r} has no {role!r} schema")
    if role == "request":
        return standalone_schema(schema_name, patch=_request_patch(profile))
    return standalone_schema(schema_name)


def _profile_schema(name: str, role: str) -> dict[str, JSON]:
    return copy.deepcopy(_profile_schema_cached(name, role))


@functools.cache
def _profile_validator(name: str, role: str) -> Validator:
    return validator_for(_profile_schema_cached(name, role))


@functools.cache
def all_features() -> Mapping[str, str]:
    """Every optional feature name with its one-line description."""
    text = resources.files(__package__).joinpath("features.yaml").read_text("utf-8")
    loaded = yaml.safe_load(text)
    return dict(loaded)


def profile_names() -> list[str]:
    """Names of the shipped profiles, sorted."""
    folder = resources.files(__package__).joinpath("profiles")
    return sorted(p.name[: -len(".yaml")] for p in folder.iterdir() if p.name.endswith(".yaml"))


_LOADED: dict[str, Profile] = {}
"""Profiles loaded from a file (:func:`load_profile`), by name, beside the shipped ones."""


def get_profile(profile_ref: str) -> Profile:
    """The profile ``profile_ref`` names or points to: a shipped one (``spec.profile_names()``),
    one loaded from a file earlier, or the path of a profile YAML file (loaded now). The one
    resolver of what a user typed for ``--profile``.

    Raises ``KeyError`` listing the shipped names for an unknown name, ``FileNotFoundError`` for
    a path (it has a ``/`` or ends in ``.yaml`` / ``.yml``) that names no file, and
    ``ValueError`` for a file that is not a profile."""
    if profile_ref in _LOADED:
        return _LOADED[profile_ref]
    if _names_a_file(profile_ref):
        return load_profile(Path(profile_ref))
    return _shipped_profile(profile_ref)


def _names_a_file(name: str) -> bool:
    """Whether ``--profile``'s value is a path rather than a profile's name."""
    separators = tuple(sep for sep in ("/", os.sep, os.altsep) if sep)
    return any(sep in name for sep in separators) or name.endswith((".yaml", ".yml"))


@functools.cache
def _shipped_profile(name: str) -> Profile:
    if name not in profile_names():
        raise KeyError(f"unknown profile {name!r}; choose one of {profile_names()} or give "
                       "the path of a profile YAML file")
    text = resources.files(__package__).joinpath("profiles").joinpath(f"{name}.yaml").read_text(
        "utf-8")
    raw = yaml.safe_load(text)
    check_profile_shape(raw, source=f"spec/profiles/{name}.yaml")
    return _build(raw)


def load_profile(path: Path) -> Profile:
    """A vendor's profile from its own YAML file (the shape of ``spec/profiles/*.yaml``): one
    file is all a new OpenAI- or FriendliAI-shaped vendor needs. Afterwards its name works
    wherever a shipped profile's does, in this process."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"profile file not found: {path}") from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ValueError(f"profile {path}: not YAML: {error}") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise ValueError(f"{path}: not a profile (a YAML mapping with a name)")
    check_profile_shape(raw, source=str(path))
    if raw["name"] in profile_names():
        raise ValueError(f"{path}: the name {raw['name']!r} is a shipped profile's")
    profile = _build(raw)
    _profile_schema_cached.cache_clear()
    _profile_validator.cache_clear()
    _LOADED[profile.name] = profile
    for role in profile.schema_names:  # fail now on a schema the document lacks
        profile.schema(role)  # type: ignore[arg-type]
    return profile


def _build(raw: dict[str, JSON]) -> Profile:
    """The profile of a mapping that follows ``spec/profile.schema.yaml``."""
    features = frozenset(raw.get("features", []))
    unknown = features - set(all_features())
    if unknown:
        raise ValueError(f"profile {raw['name']!r} claims unknown features {sorted(unknown)}")
    errors = raw["errors"]
    return Profile(
        name=raw["name"],
        title=raw["title"],
        description=" ".join(str(raw["description"]).split()),
        source=raw["source"],
        base_path=raw["base_path"],
        operations={key: Operation(**value) for key, value in raw["operations"].items()},
        schema_names=dict(raw["schemas"]),
        request_fields=tuple(raw["request_fields"]),
        required_fields=tuple(raw["required_fields"]),
        unknown_fields=raw["unknown_fields"],
        invalid_request_statuses=tuple(errors["invalid_request"]),
        unauthorized_status=int(errors["unauthorized"]),
        unknown_model_statuses=tuple(errors["unknown_model"]),
        usage_key_on_chunks=raw["stream"]["usage_key_on_chunks"],
        limits=dict(raw.get("limits", {})),
        features=features,
        headers=dict(raw.get("headers", {})),
        defaultable_fields=tuple(raw.get("defaultable_fields", [])),
        wire=raw.get("wire", "openai"),
        finish_reasons=tuple(raw.get("finish_reasons", ("stop", "length", "content_filter"))),
        finish_key_on_chunks=raw["stream"].get("finish_key_on_chunks", "null"),
        text_offsets=raw.get("text_offsets", "from_prompt"),
        openai_limits=raw.get("openai_limits", "required"),
    )


def profiles() -> dict[str, Profile]:
    """Every shipped profile by name."""
    return {name: get_profile(name) for name in profile_names()}


def all_traits() -> frozenset[str]:
    """Every trait some shipped profile has (a rule selecting by another is a typo)."""
    return frozenset().union(*(profile.traits() for profile in profiles().values()))
