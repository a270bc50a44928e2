"""SamplingParams: API defaults, eager validation with named errors, immutable normalisation."""

from __future__ import annotations

import math
from typing import Any

import pytest

from reference_engine.sampling import (
    FrozenMap,
    InvalidParameter,
    SamplingParams,
    WrongParameterType,
)


def kw(field: str, value: object) -> dict[str, Any]:
    return {field: value}


def test_defaults_are_the_api_defaults_and_switch_everything_off() -> None:
    params = SamplingParams()
    assert (params.temperature, params.top_p, params.top_k, params.min_p) == (1.0, 1.0, 0, 0.0)
    assert (params.presence_penalty, params.frequency_penalty) == (0.0, 0.0)
    assert (params.repetition_penalty, params.no_repeat_ngram, params.min_tokens) == (1.0, 1, 0)
    assert (params.xtc_threshold, params.xtc_probability) == (0.0, 0.0)
    assert params.logit_bias == {} and params.bad_word_tokens == ()
    assert params.response_format is None
    assert not params.has_logit_processors and not params.truncates
    assert not params.greedy and not params.xtc_active and not params.json_object


def test_params_are_frozen_hashable_and_compare_by_value() -> None:
    a = SamplingParams(logit_bias={3: 1.0, 1: -2}, bad_word_tokens=[[1, 2], [3]])  # type: ignore[arg-type]
    b = SamplingParams(logit_bias={1: -2.0, 3: 1}, bad_word_tokens=((1, 2), (3,)))
    assert a == b and hash(a) == hash(b)
    assert isinstance(a.logit_bias, FrozenMap) and list(a.logit_bias) == [1, 3]
    assert a.bad_word_tokens == ((1, 2), (3,))
    with pytest.raises(AttributeError):
        a.temperature = 0.5  # type: ignore[misc]
    with pytest.raises(TypeError):
        a.logit_bias[1] = 0.0  # type: ignore[index]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("temperature", -0.1),
        ("temperature", 2.5),
        ("temperature", math.nan),
        ("top_p", 0.0),
        ("top_p", 1.01),
        ("top_k", -1),
        ("min_p", 1.5),
        ("presence_penalty", 2.1),
        ("frequency_penalty", -2.1),
        ("repetition_penalty", 0.0),
        ("repetition_penalty", math.inf),
        ("no_repeat_ngram", 0),
        ("min_tokens", -1),
        ("xtc_threshold", 1.5),
        ("xtc_probability", -0.5),
        ("response_format", {"type": "yaml"}),
    ],
)
def test_impossible_values_raise_value_error_naming_field_and_value(
    field: str, value: object
) -> None:
    with pytest.raises(ValueError) as info:
        SamplingParams(**kw(field, value))
    message = str(info.value)
    assert field in message
    assert repr(value) in message


@pytest.mark.parametrize(
    ("field", "value", "shown"),
    [
        ("logit_bias", {5: 100.5}, "logit_bias[5]"),
        ("logit_bias", {-1: 0.0}, "-1"),
        ("bad_word_tokens", [[]], "bad_word_tokens[0]"),
        ("bad_word_tokens", [[1, -2]], "-2"),
    ],
)
def test_container_errors_name_the_offending_entry(field: str, value: object, shown: str) -> None:
    with pytest.raises(ValueError) as info:
        SamplingParams(**kw(field, value))
    assert field in str(info.value) and shown in str(info.value)


@pytest.mark.parametrize(
    ("field", "value"),
    [("temperature", "1"), ("top_k", 1.5), ("top_k", True), ("min_tokens", None)],
)
def test_wrong_types_raise_type_error(field: str, value: object) -> None:
    with pytest.raises(TypeError, match=field):
        SamplingParams(**kw(field, value))


def test_flags_switch_on_per_processor() -> None:
    kwargs: dict[str, Any]
    for kwargs in (
        {"logit_bias": {1: 1.0}},
        {"bad_word_tokens": [[1]]},
        {"no_repeat_ngram": 2},
        {"repetition_penalty": 1.1},
        {"presence_penalty": 0.1},
        {"frequency_penalty": -0.1},
        {"response_format": "json_object"},
        {"response_format": "json_schema", "response_schema": {"type": "object"}},
        {"response_format": "regex", "response_schema": "[a-c]+"},  # enforced since llguidance
    ):
        assert SamplingParams(**kwargs).has_logit_processors, kwargs
    for kwargs in (
        {"min_tokens": 5},  # step-dependent: process_logits checks it per step
        {"response_format": "text"},
    ):
        assert not SamplingParams(**kwargs).has_logit_processors, kwargs
    for kwargs in ({"top_k": 5}, {"top_p": 0.9}, {"min_p": 0.1}):
        assert SamplingParams(**kwargs).truncates, kwargs
    assert not SamplingParams(xtc_threshold=0.1).truncates  # probability 0: XTC is off
    assert not SamplingParams(xtc_probability=0.5).truncates  # threshold 0: XTC is off
    assert SamplingParams(xtc_threshold=0.1, xtc_probability=0.5).xtc_active
    assert SamplingParams(temperature=0).greedy


def test_errors_name_their_parameter() -> None:
    """A server reports the field from the error itself, never by reading the message."""
    with pytest.raises(InvalidParameter) as info:
        SamplingParams(logit_bias={5: 200})
    assert info.value.param == "logit_bias" and "logit_bias[5]" in str(info.value)
    with pytest.raises(WrongParameterType) as wrong:
        SamplingParams(top_k=1.5)  # type: ignore[arg-type]
    assert wrong.value.param == "top_k" and isinstance(wrong.value, TypeError)
    with pytest.raises(InvalidParameter, match="response_format"):
        SamplingParams(response_format={"type": "json_object"})  # type: ignore[arg-type]
