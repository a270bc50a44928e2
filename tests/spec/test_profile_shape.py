"""Profile files: a malformed one is reported by its key path, a missing one as missing, and
every shipped profile follows ``spec/profile.schema.yaml``."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

import spec
from spec.profile_shape import check_profile_shape, key_path, profile_schema

Raw = dict[str, Any]


def shipped(name: str) -> Raw:
    text = resources.files("spec").joinpath("profiles", f"{name}.yaml").read_text("utf-8")
    raw: Raw = yaml.safe_load(text)
    return raw


def test_the_profile_schema_is_valid_draft_2020_12() -> None:
    Draft202012Validator.check_schema(profile_schema())


@pytest.mark.parametrize("name", spec.profile_names())
def test_every_shipped_profile_follows_the_schema(name: str) -> None:
    check_profile_shape(shipped(name), source=name)


def _set(path: str, value: object) -> Callable[[Raw], None]:
    *parents, last = path.split(".")

    def change(raw: Raw) -> None:
        node = raw
        for key in parents:
            node = node[key]
        node[last] = value

    return change


def _drop(key: str) -> Callable[[Raw], None]:
    return lambda raw: raw.pop(key)


@pytest.mark.parametrize(("change", "message"), [
    (_set("errors.invalid_request", 422), "errors.invalid_request: 422 is not of type 'array'"),
    (_set("errors.unauthorized", [401]), "errors.unauthorized: [401] is not of type 'integer'"),
    (_set("request_fields", ["model", "prompt", 5]),
     "request_fields[2]: 5 is not of type 'string'"),
    (_set("unknown_fields", "drop"), "unknown_fields: 'drop' is not one of ['reject', 'ignore']"),
    (_set("operations.completions", {"path": "/v1/completions", "method": "post"}),
     "operations.completions: 'operation_id' is a required property"),
    (_set("limit", {"n": 2}), "Additional properties are not allowed ('limit' was unexpected)"),
    (_drop("stream"), "'stream' is a required property"),
])
def test_a_malformed_profile_file_is_reported_by_its_key_path(
        tmp_path: Path, change: Callable[[Raw], None], message: str) -> None:
    raw = shipped("openai-compatible")
    raw["name"] = "vendor-z"
    change(raw)
    path = tmp_path / "vendor-z.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    with pytest.raises(ValueError) as raised:
        spec.get_profile(str(path))
    assert str(raised.value) == f"profile {path}: {message}"


def test_a_profile_file_that_is_not_yaml_is_named(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("name: [unclosed\n", encoding="utf-8")
    with pytest.raises(ValueError, match=f"profile {path}: not YAML"):
        spec.get_profile(str(path))


@pytest.mark.parametrize("value", ["/nonexistent.yaml", "vendor.yml", "profiles/vendor"])
def test_a_path_that_names_no_file_is_not_found(value: str) -> None:
    with pytest.raises(FileNotFoundError, match=f"^profile file not found: {value}$"):
        spec.get_profile(value)


def test_an_unknown_name_lists_the_known_ones() -> None:
    known = r"choose one of .*'friendli', 'openai', 'openai-compatible'"
    with pytest.raises(KeyError, match=known):
        spec.get_profile("nonesuch")


def test_key_paths_read_as_a_reader_writes_them() -> None:
    assert key_path(["errors", "invalid_request"]) == "errors.invalid_request"
    assert key_path(["request_fields", 2]) == "request_fields[2]"
    assert key_path([]) == ""
