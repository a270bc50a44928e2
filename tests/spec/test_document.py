"""The contract document: a valid OpenAPI 3.1 file whose every example matches its schema."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from openapi_spec_validator import validate

import spec
from spec.document import JSON


def test_document_passes_openapi_spec_validator() -> None:
    validate(spec.load_document())


def _media_examples(document: dict[str, JSON]) -> Iterator[tuple[str, dict[str, JSON], JSON]]:
    """(where, schema, example value) for every media-type example in the document."""

    def from_content(where: str, content: dict[str, JSON]) -> Iterator[tuple[str, dict, JSON]]:
        for media_type, media in content.items():
            for name, example in media.get("examples", {}).items():
                yield f"{where} {media_type} {name}", media["schema"], example["value"]

    for path, item in document["paths"].items():
        for method, operation in item.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            where = f"{method.upper()} {path}"
            body = operation.get("requestBody", {})
            yield from from_content(f"{where} request", body.get("content", {}))
            for status, response in operation["responses"].items():
                yield from from_content(f"{where} {status}", response.get("content", {}))
    for name, response in document["components"]["responses"].items():
        yield from from_content(f"components.responses.{name}", response.get("content", {}))


def _schema_examples() -> Iterator[tuple[str, str, JSON]]:
    """(where, component name, example) for every `examples` entry of a component schema."""
    for name in spec.component_names():
        for index, example in enumerate(spec.component(name).get("examples", [])):
            yield f"components.schemas.{name}.examples[{index}]", name, example


def _validate_against(schema: dict[str, JSON], value: JSON) -> None:
    spec.validator_for(spec.make_standalone(schema)).validate(value)


MEDIA_EXAMPLES = list(_media_examples(spec.load_document()))
SCHEMA_EXAMPLES = list(_schema_examples())


def test_the_document_has_examples_to_check() -> None:
    assert len(MEDIA_EXAMPLES) >= 10
    assert len(SCHEMA_EXAMPLES) >= 5


@pytest.mark.parametrize(
    ("where", "schema", "value"), MEDIA_EXAMPLES, ids=[m[0] for m in MEDIA_EXAMPLES]
)
def test_media_type_example_matches_its_schema(where: str, schema: dict, value: JSON) -> None:
    _validate_against(schema, value)


@pytest.mark.parametrize(
    ("where", "name", "value"), SCHEMA_EXAMPLES, ids=[s[0] for s in SCHEMA_EXAMPLES]
)
def test_schema_example_matches_its_schema(where: str, name: str, value: JSON) -> None:
    spec.component_validator(name).validate(value)


def test_served_bytes_are_the_parsed_document() -> None:
    import json

    import yaml

    assert yaml.safe_load(spec.document_bytes()) == spec.load_document()
    assert json.loads(spec.document_json()) == spec.load_document()


def test_load_document_hands_out_copies() -> None:
    first = spec.load_document()
    first["paths"].clear()
    assert spec.load_document()["paths"]
