"""SSE framing (mockserver.sse): compact UTF-8 JSON, one data line per event, then [DONE]."""

from __future__ import annotations

from typing import Any

import pytest

from mockserver import sse


def test_frames() -> None:
    data = b"".join(f.data for f in sse.frames([{"text": "é\n", "n": 1}, {"x": None}]))
    assert data == (b'data: {"text":"\xc3\xa9\\n","n":1}\n\n' b'data: {"x":null}\n\n'
                    b"data: [DONE]\n\n")


def test_frame_payloads() -> None:
    frames = list(sse.frames([{"choices": [{"index": 0}]}, {"choices": []}]))
    assert [f.carries_choices for f in frames] == [True, False, False]
    assert [f.is_done for f in frames] == [False, False, True]


def test_event_terminator_can_be_bent() -> None:
    assert sse.event(b"x", end=b"\n") == b"data: x\n"
    assert sse.done_event() == b"data: [DONE]\n\n"


def test_error_ending() -> None:
    envelope = {"error": {"message": "é", "code": None}}
    assert sse.error_ending(envelope) == (b'data: {"error":{"message":"\xc3\xa9","code":null}}'
                                          b"\n\ndata: [DONE]\n\n")


def test_event_templates_fill_like_encoding_the_payload() -> None:
    sample = {"a": sse.slot(1), "b%s": ["100%", sse.slot(0)], "c": "é", "d": sse.slot(3),
              "e": sse.slot(2)}
    template = sse.event_template(sample, 4, integers={2})
    values: list[Any] = [{"x": [1, None]}, 'é "q"\n', 7, None]
    filled = {"a": values[1], "b%s": ["100%", values[0]], "c": "é", "d": values[3],
              "e": values[2]}
    given = tuple(value if isinstance(value, int) else sse.encode_json(value) for value in values)
    assert template.fill(given) == sse.event(sse.encode_json(filled))


def test_event_templates_in_order_fill_like_encoding_the_payload() -> None:
    template = sse.event_template({"a": sse.slot(0), "b": [sse.slot(1)]}, 2)
    assert template.fill((b'"x"', b"null")) == b'data: {"a":"x","b":[null]}\n\n'


def test_event_templates_refuse_payloads_that_hold_a_placeholder() -> None:
    for sample in ({"a": sse.slot(0), "b": sse.slot(0)}, {"a": sse.slot(0), "m": sse.slot(1)},
                   {"a": sse.slot(0), "m": "x" + sse.slot(7)}, {"a": 1}):
        with pytest.raises(ValueError, match="slots"):
            sse.event_template(sample, 1)
