"""FriendliAI's ``response_format`` over HTTP: json_schema and regex are enforced, stream and
non-stream alike, and what cannot be enforced is an invalid request naming the field.

Spec: ``ResponseFormat`` in ``spec/completions.yaml`` (``json_schema.schema``, ``schema``);
the engine's side is ``reference_engine.sampling.grammar``. On FriendliAI's route invalid
values are 422 (the profile's ``errors``), like ``min_tokens`` with ``response_format``.
"""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
import pytest
from mock_live import MODEL, LiveServer

import spec

FRIENDLI = "/dedicated/v1/completions"
SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"},
                                           "tag": {"enum": ["x", "y"]}},
          "required": ["a", "tag"], "additionalProperties": False}
PATTERN = "[a-c]{2,4}-[0-9]{1,3}"


def body(response_format: dict[str, Any], seed: int, **fields: Any) -> dict[str, Any]:
    return {"model": MODEL, "prompt": "The Python language", "max_tokens": 40, "seed": seed,
            "response_format": response_format, **fields}


def whole_and_streamed(server: LiveServer, sent: dict[str, Any]) -> tuple[str, str]:
    """The non-streamed text and finish_reason, checked equal to the streamed ones."""
    data = server.post(FRIENDLI, sent).json()
    choice = data["choices"][0]
    chunks = server.post(FRIENDLI, {**sent, "stream": True}).chunks()
    spec.get_profile("friendli").validator("event_stream").validate(chunks)
    text = "".join(c["choices"][0]["text"] for c in chunks if c != "[DONE]" and c["choices"])
    reasons = [c["choices"][0]["finish_reason"] for c in chunks
               if c != "[DONE]" and c["choices"] and c["choices"][0]["finish_reason"]]
    assert (text, reasons) == (choice["text"], [choice["finish_reason"]])
    return choice["text"], choice["finish_reason"]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_json_schema_is_enforced(server: LiveServer, seed: int) -> None:
    fmt = {"type": "json_schema", "json_schema": {"schema": SCHEMA}}
    text, reason = whole_and_streamed(server, body(fmt, seed))
    assert reason == "stop", text
    jsonschema.validate(json.loads(text), SCHEMA)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_regex_is_enforced(server: LiveServer, seed: int) -> None:
    text, reason = whole_and_streamed(server, body({"type": "regex", "schema": PATTERN}, seed))
    assert reason == "stop" and re.fullmatch(PATTERN, text), text


@pytest.mark.parametrize(
    "response_format",
    [
        {"type": "json_schema", "json_schema": {"schema": {"type": "object",
                                                           "required": "a"}}},
        {"type": "json_schema", "json_schema": {"schema": {"type": "string", "minLength": 3,
                                                           "maxLength": 1}}},
        {"type": "regex", "schema": "(?=a)b"},
        {"type": "regex", "schema": "(?<!a)b"},
        {"type": "regex", "schema": "(a)\\1"},
    ],
    ids=["invalid-schema", "unsatisfiable-schema", "lookahead", "lookbehind", "backreference"],
)
def test_what_cannot_be_enforced_is_an_invalid_request(
    server: LiveServer, response_format: dict[str, Any]
) -> None:
    reply = server.post(FRIENDLI, body(response_format, 1))
    assert (reply.status, reply.error["param"], reply.error["code"]) == (
        422, "response_format", "invalid_value"), reply.data
    assert "response_format" in reply.error["message"]
