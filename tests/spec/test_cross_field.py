"""Cross-field rules: each kind, on the rules the document ships."""

from __future__ import annotations

import pytest

import spec


def _ids(body: dict, profile_name: str) -> list[str]:
    return [v.rule_id for v in spec.cross_field_violations(body, profile_name)]


BASE = {"model": "m", "prompt": "hi"}


@pytest.mark.parametrize(
    ("body", "profile_name", "expected"),
    [
        (BASE, "openai", []),
        ({**BASE, "best_of": 1, "n": 2}, "openai", ["best-of-at-least-n"]),
        ({**BASE, "best_of": 2, "n": 2}, "openai", []),
        ({**BASE, "n": 3}, "openai", []),
        ({**BASE, "best_of": 3, "stream": True}, "openai", ["best-of-not-streamed"]),
        ({**BASE, "best_of": 1, "stream": True}, "openai", []),
        (
            {**BASE, "stream_options": {"include_usage": True}},
            "openai",
            ["stream-options-need-stream"],
        ),
        (
            {**BASE, "stream_options": {"include_usage": True}, "stream": False},
            "openai-compatible",
            ["stream-options-need-stream"],
        ),
        ({**BASE, "stream_options": None}, "openai", []),
        ({**BASE, "stream_options": {}}, "openai", ["stream-options-need-stream"]),
        # vLLM's own checks: an empty stream_options counts as left out, max_tokens 0 needs echo
        ({**BASE, "stream_options": {}}, "vllm", []),
        ({**BASE, "stream_options": {"include_usage": True}}, "vllm",
         ["vllm-stream-options-need-stream"]),
        ({**BASE, "max_tokens": 0}, "vllm", ["vllm-max-tokens-zero-needs-echo"]),
        ({**BASE, "max_tokens": 0, "echo": False}, "vllm", ["vllm-max-tokens-zero-needs-echo"]),
        ({**BASE, "max_tokens": 0, "echo": True}, "vllm", []),
        ({**BASE, "max_tokens": 1}, "vllm", []),
        ({**BASE, "max_tokens": 0}, "openai", []),
        ({**BASE, "max_tokens": 2, "min_tokens": 4}, "vllm",
         ["vllm-min-tokens-at-most-max-tokens"]),
        ({**BASE, "max_tokens": 4, "min_tokens": 4}, "vllm", []),
        ({**BASE, "min_tokens": 40}, "vllm", []),  # no max_tokens: the context's length bounds it
        ({**BASE, "n": 2, "temperature": 0}, "vllm", ["vllm-greedy-n-is-one"]),
        ({**BASE, "n": 2, "temperature": 0.7}, "vllm", []),
        ({**BASE, "n": 2, "temperature": 0}, "openai", []),
        ({**BASE, "prompt_logprobs": 2, "stream": True}, "vllm",
         ["vllm-prompt-logprobs-not-streamed"]),
        ({**BASE, "prompt_logprobs": 2}, "vllm", []),
        ({**BASE, "prompt_logprobs": 0, "stream": True}, "vllm", []),
        ({**BASE, "stream_options": {}, "stream": True}, "openai", []),
        ({"model": "m"}, "friendli", ["prompt-xor-tokens"]),
        ({"model": "m", "prompt": "x", "tokens": [1]}, "friendli", ["prompt-xor-tokens"]),
        ({"model": "m", "tokens": [1], "prompt": None}, "friendli", []),
        (
            {**BASE, "max_tokens": 3, "max_total_tokens": 9},
            "friendli",
            ["max-tokens-xor-max-total-tokens"],
        ),
        (
            {**BASE, "min_tokens": 3, "min_total_tokens": 9},
            "friendli",
            ["min-tokens-xor-min-total-tokens"],
        ),
        (
            {**BASE, "min_tokens": 3, "response_format": {"type": "text"}},
            "friendli",
            ["min-tokens-without-response-format"],
        ),
        ({**BASE, "seed": [1, 2]}, "friendli", ["seed-list-matches-n"]),
        ({**BASE, "seed": [1, 2], "n": 2}, "friendli", []),
        ({**BASE, "seed": 5, "n": 2}, "friendli", []),
        ({**BASE, "embedding_to_replace": [0.1]}, "friendli", ["embedding-replacement-pairs"]),
    ],
)
def test_rules(body: dict, profile_name: str, expected: list[str]) -> None:
    assert _ids(body, profile_name) == expected


def test_violation_names_the_first_field_as_param() -> None:
    (violation,) = spec.cross_field_violations({**BASE, "best_of": 1, "n": 2}, "openai")
    assert violation.param == "best_of"
    assert "best_of" in violation.message


def test_every_rule_names_wires_and_profiles_that_exist_and_a_source() -> None:
    wires = {spec.get_profile(name).wire for name in spec.profile_names()}
    for rule in spec.cross_field_rules():
        assert rule.wires and rule.wires <= wires, rule.id
        assert rule.source and rule.message, rule.id
        for key in ("profiles", "except_profiles"):
            named = rule.options.get(key, [])
            assert isinstance(named, list), rule.id
            assert set(named) <= set(spec.profile_names()), (rule.id, key)


def _format(response_format: dict) -> dict:
    return {"model": "m", "prompt": "x", "response_format": response_format}


@pytest.mark.parametrize(
    ("response_format", "expected"),
    [
        ({"type": "json_schema", "json_schema": {"schema": {"type": "object"}}}, []),
        ({"type": "json_schema", "json_schema": {"schema": {"required": "a"}}},
         ["json-schema-is-a-schema"]),
        ({"type": "json_schema", "json_schema": {"schema": {"type": "frobnicate"}}},
         ["json-schema-is-a-schema"]),
        ({"type": "json_object", "json_schema": {"schema": {"required": "a"}}}, []),
        ({"type": "regex", "schema": "[a-c]{2,4}-[0-9]+"}, []),
        ({"type": "regex", "schema": "(?=a)b"}, ["regex-without-lookarounds"]),
        ({"type": "regex", "schema": "a(?<!b)"}, ["regex-without-lookarounds"]),
        ({"type": "text", "schema": "(?=a)b"}, []),
    ],
)
def test_response_formats_the_engine_cannot_enforce(response_format: dict,
                                                    expected: list[str]) -> None:
    assert _ids(_format(response_format), "friendli") == expected


@pytest.mark.parametrize(
    ("pattern", "lookaround"),
    [("(?=a)", True), ("(?!a)", True), ("(?<=a)b", True), ("(?<!a)b", True),
     (r"\(?=", False), ("[(?=]", False), ("[]a(?=]", False), ("[^]](?=x)", True),
     ("(?<name>a)", False), ("(?P<n>a)(?P=n)", False), ("(a)\\1", False)],
)
def test_lookarounds_are_found_outside_escapes_and_classes(pattern: str, lookaround: bool
                                                           ) -> None:
    assert spec.cross_field.has_lookaround(pattern) is lookaround
