"""The documents a fuzz run generates from."""

from __future__ import annotations

import json

import spec
from conformance.fuzz.document import fuzz_document, relative_path, without_examples


def test_paths_are_relative_to_the_base_path() -> None:
    assert set(fuzz_document("openai")["paths"]) == {"/completions", "/models"}
    assert set(fuzz_document("friendli")["paths"]) == {"/completions"}
    assert relative_path(spec.get_profile("friendli"), "/dedicated/v1/completions") == (
        "/completions")
    assert "servers" not in fuzz_document("openai")


def test_without_examples_keeps_everything_else() -> None:
    document = fuzz_document("openai")
    stripped = without_examples(document)
    text = json.dumps(stripped)
    assert '"examples"' not in text and '"example"' not in text
    request = stripped["components"]["schemas"]["CompletionRequest"]
    assert set(request["properties"]) == set(spec.get_profile("openai").request_fields)
    assert '"examples"' in json.dumps(document)  # the original is left as it was
