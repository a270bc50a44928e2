"""Profiles load, hand out valid Draft 2020-12 schemas, and narrow the request as they say."""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator

import spec

ROLES = ("request", "response", "chunk", "usage_chunk", "event_stream", "error", "models")


def test_the_three_profiles_ship() -> None:
    assert spec.profile_names() == ["friendli", "openai", "openai-compatible", "vllm"]


@pytest.mark.parametrize("name", spec.profile_names())
def test_every_schema_of_a_profile_is_valid_draft_2020_12(name: str) -> None:
    profile = spec.get_profile(name)
    for role in ROLES:
        if role not in profile.schema_names:
            continue
        schema = profile.schema(role)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("name", spec.profile_names())
def test_every_claimed_feature_is_documented(name: str) -> None:
    assert spec.get_profile(name).features <= set(spec.all_features())


def test_strict_openai_rejects_unknown_and_extension_fields() -> None:
    validator = spec.get_profile("openai").validator("request")
    assert validator.is_valid({"model": "m", "prompt": "hi"})
    assert not validator.is_valid({"model": "m", "prompt": "hi", "top_k": 3})
    assert not validator.is_valid({"model": "m", "prompt": "hi", "bogus": 1})


def test_lenient_profile_accepts_extensions_and_may_ignore_unknown_fields() -> None:
    profile = spec.get_profile("openai-compatible")
    validator = profile.validator("request")
    assert validator.is_valid({"model": "m", "prompt": "hi", "top_k": 3, "min_p": 0.1})
    assert not validator.is_valid({"model": "m", "prompt": "hi", "ignore_eos": True})
    assert profile.unknown_fields == "ignore"


@pytest.mark.parametrize(
    "prompt",
    ["text", ["a", "b"], [1, 2, 3], [[1, 2], [3]]],
    ids=["str", "str[]", "int[]", "int[][]"],
)
def test_openai_prompt_shapes(prompt: object) -> None:
    assert (
        spec.get_profile("openai").validator("request").is_valid({"model": "m", "prompt": prompt})
    )


@pytest.mark.parametrize("prompt", [[], [[]], [-1], None, 3, [["a"]]])
def test_openai_rejects_bad_prompts(prompt: object) -> None:
    assert (
        not spec.get_profile("openai")
        .validator("request")
        .is_valid({"model": "m", "prompt": prompt})
    )


def test_friendli_needs_exactly_one_of_prompt_and_tokens() -> None:
    validator = spec.get_profile("friendli").validator("request")
    assert validator.is_valid({"model": "m", "prompt": "hi"})
    assert validator.is_valid({"model": "m", "tokens": [1, 2]})
    assert not validator.is_valid({"model": "m"})
    assert not validator.is_valid({"model": "m", "prompt": "hi", "tokens": [1]})


def test_friendli_stop_is_a_list_and_seed_may_be_one() -> None:
    validator = spec.get_profile("friendli").validator("request")
    assert not validator.is_valid({"model": "m", "prompt": "hi", "stop": "x"})
    assert validator.is_valid({"model": "m", "prompt": "hi", "stop": ["x"], "seed": [1, 2], "n": 2})


def test_chunk_finish_reason_is_nullable_but_response_finish_reason_is_not() -> None:
    openai = spec.get_profile("openai")
    choice = {"index": 0, "text": "x", "logprobs": None, "finish_reason": None}
    base = {"id": "c", "object": "text_completion", "created": 1, "model": "m"}
    assert openai.validator("chunk").is_valid({**base, "choices": [choice]})
    assert not openai.validator("response").is_valid({**base, "choices": [choice]})


def test_echo_logprobs_may_start_with_null() -> None:
    logprobs = {
        "tokens": ["Hi", " there"],
        "token_logprobs": [None, -1.5],
        "top_logprobs": [None, {" there": -1.5}],
        "text_offset": [0, 2],
    }
    assert spec.component_validator("LogprobsObject").is_valid(logprobs)


def test_usage_chunk_needs_empty_choices_and_usage() -> None:
    validator = spec.get_profile("openai").validator("usage_chunk")
    base = {"id": "c", "object": "text_completion", "created": 1, "model": "m"}
    usage = {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}
    assert validator.is_valid({**base, "choices": [], "usage": usage})
    assert not validator.is_valid({**base, "choices": [], "usage": None})


def test_error_envelope_strict_and_lenient() -> None:
    strict = spec.get_profile("openai").validator("error")
    lenient = spec.get_profile("openai-compatible").validator("error")
    body = {
        "error": {"message": "bad", "type": "invalid_request_error", "param": None, "code": 400}
    }
    assert not strict.is_valid(body)
    assert lenient.is_valid(body)
    assert (
        spec.get_profile("friendli")
        .validator("error")
        .is_valid({"detail": [{"loc": ["body", "n"], "msg": "bad", "type": "value_error"}]})
    )


def test_unknown_profile_and_feature_are_clear_errors() -> None:
    with pytest.raises(KeyError, match="choose one of"):
        spec.get_profile("nope")
    with pytest.raises(KeyError, match="unknown feature"):
        spec.get_profile("openai").claims("telepathy")


def test_profile_paths() -> None:
    assert spec.get_profile("openai").completions_path == "/v1/completions"
    assert spec.get_profile("friendli").completions_path == "/dedicated/v1/completions"
    assert spec.get_profile("friendli").models_path is None


@pytest.mark.parametrize("name", spec.profile_names())
def test_profile_document_is_valid_and_narrowed(name: str) -> None:
    from openapi_spec_validator import validate

    document = spec.profile_document(name)
    validate(document)
    profile = spec.get_profile(name)
    operations = {op["operationId"] for item in document["paths"].values() for op in item.values()}
    assert operations == {op.operation_id for op in profile.operations.values()}
    request = document["components"]["schemas"][profile.schema_names["request"]]
    assert list(request["properties"]) == list(profile.request_fields)
    completions = profile.operations["completions"]
    body = document["paths"][completions.path][completions.method.lower()]["requestBody"]
    # what a generator draws is the profile's own request (vLLM's limits and extra fields)
    assert body["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/" + profile.schema_names["request"]}
