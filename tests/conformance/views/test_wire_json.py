"""The one parser of the server's JSON: a bounded depth, and a ValueError for anything else."""

from __future__ import annotations

import pytest

from conformance.views import parse_payload
from conformance.wire_json import MAX_JSON_DEPTH, TooDeep, nesting_depth, parse_json


def test_json_nested_100000_deep_is_too_deep_not_a_recursion_error() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(TooDeep, match=f"deeper than {MAX_JSON_DEPTH} levels"):
        parse_json(deep)
    with pytest.raises(ValueError):
        parse_json(deep.encode())


def test_the_limit_itself_is_read() -> None:
    text = '{"a":' * (MAX_JSON_DEPTH - 1) + "[]" + "}" * (MAX_JSON_DEPTH - 1)
    assert nesting_depth(text) == MAX_JSON_DEPTH
    assert parse_json(text) is not None
    with pytest.raises(TooDeep):
        parse_json("[" + text + "]")


def test_brackets_inside_strings_do_not_count() -> None:
    text = '{"text": "' + "[{" * 500 + '\\" ]"}'
    assert nesting_depth(text) == 1
    assert parse_json(text) == {"text": "[{" * 500 + '" ]'}


def test_not_json_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        parse_json(b"{oops")


def test_a_stream_event_nested_too_deep_is_an_invalid_payload() -> None:
    kind, _, problem = parse_payload("[" * 5000 + "]" * 5000)
    assert kind == "invalid"
    assert problem is not None and f"deeper than {MAX_JSON_DEPTH} levels" in problem
