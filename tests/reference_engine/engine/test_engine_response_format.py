"""response_format through the whole engine: output validates / fully matches unless cut by
length, stream == non-stream, reported logprobs as ``sampling.grammar`` documents them.

Schemas and patterns are drawn from the supported subsets (FriendliAI's JSON Schema subset:
``type`` object / array / string / number / integer / boolean / null, ``properties``,
``required``, ``enum``, ``items``, bounds; regex without lookarounds or back-references, in the
syntax Rust's ``regex`` and Python's ``re`` read the same way).
"""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reference_engine import Engine, FinishEvent, GenerationRequest, SamplingParams, TextEvent
from reference_engine.sampling import InvalidParameter
from reference_engine.sampling.logprobs import LOGPROB_FLOOR

ENGINE = Engine()
PROMPTS = ("The Python language", '{"name": "', "Lists are", "0")

# -- strategies ----------------------------------------------------------------------------

names = st.text(alphabet="abcdefgh_", min_size=1, max_size=6)
scalars = st.one_of(st.booleans(), st.none(), st.integers(-50, 50),
                    st.text(alphabet="xyz ", max_size=4))


def _leaf_schemas() -> st.SearchStrategy[dict[str, Any]]:
    integer = st.builds(lambda lo, width: {"type": "integer", "minimum": lo,
                                           "maximum": lo + width},
                        st.integers(-100, 100), st.integers(0, 1000))
    string = st.builds(lambda n: {"type": "string", "maxLength": n}, st.integers(0, 6))
    enum = st.lists(scalars, min_size=1, max_size=4, unique_by=json.dumps).map(
        lambda values: {"enum": values})
    return st.one_of(
        st.just({"type": "boolean"}), st.just({"type": "null"}), st.just({"type": "integer"}),
        st.just({"type": "number"}), integer, string, enum,
    )


def _containers(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict]:
    objects = st.dictionaries(names, children, max_size=3).flatmap(
        lambda props: st.builds(
            lambda required, closed: {"type": "object", "properties": props,
                                      "required": required, "additionalProperties": not closed},
            st.lists(st.sampled_from(sorted(props)), unique=True) if props else st.just([]),
            st.booleans(),
        ))
    arrays = st.builds(lambda items, n: {"type": "array", "items": items, "maxItems": n},
                       children, st.integers(0, 3))
    return st.one_of(objects, arrays)


json_schemas = st.recursive(_leaf_schemas(), _containers, max_leaves=6)
object_schemas = _containers(json_schemas).filter(lambda schema: schema["type"] == "object")

_atoms = st.one_of(
    st.sampled_from(["a", "b", "x", " ", "-", "0", "7", "\\.", ",", "[a-c]", "[0-9]", "[ab ]",
                     "\\d", "[A-Z]", "[^\\n\\\\\"]"]),
)


def _composed(parts: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    quantified = st.builds(lambda p, q: f"(?:{p}){q}", parts,
                           st.sampled_from(["?", "*", "+", "{2}", "{1,3}", "{0,2}"]))
    sequence = st.lists(parts, min_size=2, max_size=4).map("".join)
    alternation = st.lists(parts, min_size=2, max_size=3).map(lambda ps: f"(?:{'|'.join(ps)})")
    return st.one_of(quantified, sequence, alternation)


patterns = st.recursive(_atoms, _composed, max_leaves=8)

# -- helpers -------------------------------------------------------------------------------


def _request(params: SamplingParams, prompt: str, seed: int, **fields: Any) -> GenerationRequest:
    return GenerationRequest(prompts=(prompt,), seed=seed, sampling=params, **fields)


def _streamed_text(request: GenerationRequest) -> tuple[str, str]:
    text, reason = "", ""
    for event in ENGINE.stream(request):
        if isinstance(event, (TextEvent, FinishEvent)):
            text += event.text
        if isinstance(event, FinishEvent):
            reason = event.finish_reason
    return text, reason


def _check_stream_equals_whole(request: GenerationRequest) -> tuple[str, str]:
    choice = ENGINE.complete(request).choices[0]
    assert _streamed_text(request) == (choice.text, choice.finish_reason)
    return choice.text, choice.finish_reason


_SETTINGS = settings(max_examples=25, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow])

# -- properties ----------------------------------------------------------------------------


@_SETTINGS
@given(object_schemas, st.sampled_from(PROMPTS), st.integers(0, 2**32 - 1),
       st.sampled_from([0.0, 0.7, 1.0]))
def test_json_schema_output_validates_unless_cut(
    schema: dict[str, Any], prompt: str, seed: int, temperature: float
) -> None:
    params = SamplingParams(temperature=temperature, response_format="json_schema",
                            response_schema=schema)
    text, reason = _check_stream_equals_whole(_request(params, prompt, seed, max_tokens=48))
    if reason != "length":
        jsonschema.validate(json.loads(text), schema)


@_SETTINGS
@given(patterns, st.sampled_from(PROMPTS), st.integers(0, 2**32 - 1),
       st.sampled_from([0.0, 1.0]))
def test_regex_output_fully_matches_unless_cut(
    pattern: str, prompt: str, seed: int, temperature: float
) -> None:
    params = SamplingParams(temperature=temperature, response_format="regex",
                            response_schema=pattern)
    text, reason = _check_stream_equals_whole(_request(params, prompt, seed, max_tokens=24))
    if reason != "length":
        assert re.fullmatch(pattern, text), (pattern, text)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_schemas, st.sampled_from(PROMPTS), st.integers(0, 2**32 - 1),
       st.floats(0.0, 1.5), st.integers(1, 200))
def test_any_schema_output_validates_unless_cut_at_length(
    schema: dict[str, Any], prompt: str, seed: int, temperature: float, max_tokens: int
) -> None:
    params = SamplingParams(temperature=temperature, top_p=0.95, response_format="json_schema",
                            response_schema=schema)
    text, reason = _check_stream_equals_whole(_request(params, prompt, seed,
                                                       max_tokens=max_tokens))
    if reason != "length":
        jsonschema.validate(json.loads(text), schema)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(patterns, st.sampled_from(PROMPTS), st.integers(0, 2**32 - 1), st.floats(0.0, 1.5),
       st.integers(1, 120))
def test_any_pattern_output_fully_matches_unless_cut_at_length(
    pattern: str, prompt: str, seed: int, temperature: float, max_tokens: int
) -> None:
    params = SamplingParams(temperature=temperature, top_k=40, response_format="regex",
                            response_schema=pattern)
    text, reason = _check_stream_equals_whole(_request(params, prompt, seed,
                                                       max_tokens=max_tokens))
    if reason != "length":
        assert re.fullmatch(pattern, text), (pattern, text)


# -- examples ------------------------------------------------------------------------------


def test_the_issue_examples_are_enforced() -> None:
    """Issue 21's reports: ``{"a": <integer>}`` gave newlines and text, ``[a-c]{2,4}-[0-9]+``
    gave ``clause 9.``; not vacuous either: some runs end before the length limit."""
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"],
              "additionalProperties": False}
    ended = 0
    for seed in range(8):
        params = SamplingParams(response_format="json_schema", response_schema=schema)
        choice = ENGINE.complete(_request(params, "The Python language", seed,
                                          max_tokens=40)).choices[0]
        assert choice.text.startswith('{"a": ')
        if choice.finish_reason != "length":
            ended += 1
            jsonschema.validate(json.loads(choice.text), schema)
    assert ended >= 4
    pattern = "[a-c]{2,4}-[0-9]{1,3}"
    for seed in range(8):
        params = SamplingParams(response_format="regex", response_schema=pattern)
        choice = ENGINE.complete(_request(params, "The Python language", seed,
                                          max_tokens=20)).choices[0]
        assert choice.finish_reason == "stop" and re.fullmatch(pattern, choice.text), choice


def test_same_request_and_seed_give_the_same_bytes() -> None:
    params = SamplingParams(temperature=1.0, response_format="json_schema", response_schema={
        "type": "object", "properties": {"n": {"type": "string"}, "k": {"type": "number"}}})
    first = ENGINE.complete(_request(params, "The", 9, max_tokens=60, n=2))
    again = Engine().complete(_request(params, "The", 9, max_tokens=60, n=2))
    assert first == again


def test_reported_logprobs_are_before_the_mask_except_where_the_output_may_end() -> None:
    """The contract in ``reference_engine.sampling.grammar``: at a step where the output may not
    end, ``top_logprobs`` may list tokens the grammar rejects (the first token of a JSON
    object must be ``{``) and never lists end-of-text; where it may end, only allowed tokens
    are listed (after ``aa-1`` under ``[a-c]{2,4}-[0-9]+``: digits)."""
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    params = SamplingParams(response_format="json_schema", response_schema=schema)
    choice = ENGINE.complete(_request(params, "The Python language", 1, max_tokens=4,
                                      logprobs=5)).choices[0]
    assert choice.logprobs is not None
    first = choice.logprobs[0]
    assert first.token == "{"
    assert first.top is not None and len(first.top) >= 5
    rejected = {k: v for k, v in first.top.items() if k != "{"}
    assert rejected and all(v > LOGPROB_FLOOR for v in rejected.values())
    assert "<|endoftext|>" not in first.top

    pattern = "[a-c]{2,4}-[0-9]+"
    params = SamplingParams(response_format="regex", response_schema=pattern)
    choice = ENGINE.complete(_request(params, "The Python language", 3, max_tokens=12,
                                      logprobs=5)).choices[0]
    assert choice.logprobs is not None
    seen, checked = "", 0
    for entry in choice.logprobs:
        if re.fullmatch(pattern, seen):  # the output may end here: only allowed tokens
            assert entry.top is not None
            assert all(re.fullmatch("[0-9]+", k) or k == "<|endoftext|>"
                       for k in entry.top), entry
            checked += 1
        seen += entry.token
    assert checked >= 3


def test_invalid_schemas_and_patterns_name_response_format() -> None:
    for kwargs in (
        {"response_format": "json_schema", "response_schema": {"type": "object",
                                                               "required": "a"}},
        {"response_format": "regex", "response_schema": "(?!x)y"},
        {"response_format": "regex", "response_schema": "(a)\\1"},
    ):
        with pytest.raises(InvalidParameter) as info:
            SamplingParams(**kwargs)  # type: ignore[arg-type]
        assert info.value.param == "response_format"
