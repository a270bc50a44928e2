"""The test oracle for json_object (the byte-level recognizer the engine used before
llguidance), checked against json.loads: it must be right before it judges the engine."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from json_object_oracle import INITIAL_STATE, JsonGrammar, is_complete

GRAMMAR = JsonGrammar()


def run(data: bytes, grammar: JsonGrammar = GRAMMAR) -> tuple[int, str, int] | None:
    return grammar.advance(INITIAL_STATE, data)


VALID = [
    "{}",
    ' \n{ "a" : 1 } \t',
    '{"a":[1,-2.5,0,-0,1e5,1E-5,2.0e+3,true,false,null,"x",{},[]]}',
    '{"k":{"n":{"m":[[[]]]}}}',
    '{"esc":"\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\uD83D\\uDE00"}',
    '{"ü":"日本語 🎉","":""}',
]
INVALID = [
    "[]",
    "1",
    '"a"',
    "{,}",
    '{"a"}',
    '{"a":}',
    '{"a":1,}',
    '{"a":01}',
    '{"a":1.}',
    '{"a":.5}',
    '{"a":-}',
    '{"a":1e}',
    '{"a":+1}',
    '{"a":tru}',
    '{"a":True}',
    '{"a":NaN}',
    '{"a":"\\x"}',
    '{"a":"\\u12G4"}',
    '{"a":"tab\there"}',
    '{"a":1}}',
    '{"a":1} x',
    "{'a':1}",
    '{"a":[1}',
    '{"a":{1]}',
]


@pytest.mark.parametrize("text", VALID)
def test_valid_objects_are_complete_and_every_prefix_is_viable(text: str) -> None:
    data = text.encode()
    assert json.loads(data) is not None
    state = run(data)
    assert state is not None and is_complete(state)
    for end in range(len(data)):
        prefix_state = run(data[:end])
        assert prefix_state is not None, data[:end]
        assert not is_complete(prefix_state) or data[end:].strip() == b""


@pytest.mark.parametrize("text", INVALID)
def test_invalid_documents_are_never_complete(text: str) -> None:
    state = run(text.encode())
    assert state is None or not is_complete(state)


@pytest.mark.parametrize(
    "data",
    [
        b'{"a":"\x80"}',  # a lone continuation byte
        b'{"a":"\xc0\x80"}',  # overlong NUL
        b'{"a":"\xe0\x80\x80"}',  # overlong
        b'{"a":"\xed\xa0\x80"}',  # UTF-16 surrogate
        b'{"a":"\xf4\x90\x80\x80"}',  # above U+10FFFF
        b'{"a":"\xe6\x97"}',  # truncated character before the quote
        b'{"\xff":1}',
        b"{\xc3\xa9:1}",  # non-ASCII outside a string
    ],
)
def test_malformed_utf8_is_rejected(data: bytes) -> None:
    state = run(data)
    assert state is None or not is_complete(state)


def test_utf8_may_be_split_across_tokens() -> None:
    grammar = JsonGrammar()
    state = grammar.advance(INITIAL_STATE, b'{"a":"\xe6')
    state = grammar.advance(state, b"\x97")
    state = grammar.advance(state, b'\xa5"}')
    assert state is not None and is_complete(state)


def test_whitespace_runs_are_bounded_and_reset_by_other_bytes() -> None:
    grammar = JsonGrammar(max_whitespace=3)
    assert run(b"   {", grammar) is not None
    assert run(b"    {", grammar) is None
    assert run(b'{   "a"   :   1   ,   "b":2}   ', grammar) is not None
    assert run(b"{}    ", grammar) is None
    assert run(b'{"a":"     "}', grammar) is not None  # spaces inside strings are content


def test_nesting_depth_is_bounded() -> None:
    grammar = JsonGrammar(max_depth=3)
    assert run(b'{"a":[{}]}', grammar) is not None
    assert run(b'{"a":[[', grammar) is not None
    assert run(b'{"a":[[[', grammar) is None
    with pytest.raises(ValueError, match="max_depth"):
        JsonGrammar(max_depth=0)


def test_states_are_plain_hashable_tuples() -> None:
    a = run(b'{"a": [1')
    b = run(b'{"b": [2')
    assert a == b and hash(a) == hash(b)
    with pytest.raises(ValueError, match="not a JSON recognizer state"):
        GRAMMAR.step((99, "", 0), 0x20)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(st.text(max_size=4), json_values, max_size=4),
    st.sampled_from([None, 0, 1, 2]),
    st.booleans(),
)
def test_serialised_objects_are_recognised(obj: dict, indent: int | None, ascii_only: bool) -> None:
    data = json.dumps(obj, indent=indent, ensure_ascii=ascii_only).encode()
    state = run(data)
    assert state is not None and is_complete(state)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='{}[]":,0123456789-.eE +tfnrulsa\\\n', max_size=24))
def test_complete_means_json_loads_returns_an_object(text: str) -> None:
    state = run(text.encode())
    parsed_ok = True
    try:
        value = json.loads(text)
    except ValueError:
        parsed_ok = False
    if state is not None and is_complete(state):
        assert parsed_ok and isinstance(value, dict)
    elif parsed_ok and isinstance(value, dict):  # 24 bytes stay within both bounds
        pytest.fail(f"json.loads accepts {text!r} but the recognizer does not")
