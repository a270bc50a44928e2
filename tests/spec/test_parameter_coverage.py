"""Every parameter named in the seed documents and reference specs is in our contract.

The names live in tests/fixtures/reference_parameters.yaml (with their sources), because a
fresh clone has no ../shared to read them from.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import spec

FIXTURE = yaml.safe_load(
    (Path(__file__).parents[1] / "fixtures" / "reference_parameters.yaml").read_text("utf-8")
)
OMITTED: dict[str, str] = FIXTURE["deliberate_omissions"] or {}


def _request_names() -> set[str]:
    names: set[str] = set()
    for schema in ("CompletionRequest", "FriendliCompletionRequest"):
        names |= set(spec.component(schema)["properties"])
    return names


def _stream_option_names() -> set[str]:
    return set(spec.component("StreamOptions")["properties"])


def _response_names() -> set[str]:
    names: set[str] = set()
    for schema in (
        "CompletionChunk",
        "ChunkChoice",
        "FriendliCompletionChunk",
        "FriendliChunkChoice",
        "LogprobsObject",
        "Usage",
        "UsageChunk",
    ):
        names |= set(spec.component(schema)["properties"])
    return names


REQUEST_CASES = [
    (source, name) for source, names in FIXTURE["request_parameters"].items() for name in names
]
RESPONSE_CASES = [
    (source, name) for source, names in FIXTURE["response_fields"].items() for name in names
]


@pytest.mark.parametrize(
    ("source", "name"), REQUEST_CASES, ids=[f"{s}:{n}" for s, n in REQUEST_CASES]
)
def test_request_parameter_is_in_the_contract(source: str, name: str) -> None:
    if name in OMITTED:
        pytest.skip(f"deliberately omitted: {OMITTED[name]}")
    known = _stream_option_names() if source.endswith(".stream_options") else _request_names()
    assert name in known, f"{name!r} (named in {source}) is missing from spec/completions.yaml"


@pytest.mark.parametrize(
    ("source", "name"), RESPONSE_CASES, ids=[f"{s}:{n}" for s, n in RESPONSE_CASES]
)
def test_response_field_is_in_the_contract(source: str, name: str) -> None:
    assert name in _response_names(), f"{name!r} (named in {source}) is missing"


def test_omissions_are_really_omitted() -> None:
    # A stale omission (the name was added to the contract later) hides nothing but misleads.
    assert not (set(OMITTED) & (_request_names() | _stream_option_names()))


def test_every_profile_field_exists_in_its_request_schema() -> None:
    for profile in spec.profiles().values():
        properties = spec.component(profile.schema_names["request"])["properties"]
        assert set(profile.request_fields) <= set(properties), profile.name
