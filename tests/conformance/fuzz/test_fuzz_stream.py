"""The text/event-stream deserializer on the harness's SSE parser."""

from __future__ import annotations

import pytest
import schemathesis
from fuzz_support import chunk, response, sse

from conformance.fuzz.stream import event_stream, parse_stream, payloads


def test_payloads_are_json_then_done() -> None:
    content = sse(chunk(0, "a"), chunk(0, "b", "stop"))
    assert payloads(content) == [chunk(0, "a"), chunk(0, "b", "stop"), "[DONE]"]


def test_every_valid_framing_is_read() -> None:
    content = b": comment\r\nevent: message\r\ndata:{\"a\":\r\ndata: 1}\r\n\r\ndata: [DONE]\r\r"
    assert payloads(content) == [{"a": 1}, "[DONE]"]


@pytest.mark.parametrize(("content", "problem"), [
    (b"data: {\"a\": 1\n\n", "neither JSON"),
    (b"data: {\"a\": 1}\n\ndata: [DONE]", "unterminated-event"),
    (b"data: \xff\n\n", "invalid-utf8"),
    (b"data: " + b"[" * 100_000 + b"]" * 100_000 + b"\n\n", "nested deeper than 100 levels"),
])
def test_broken_streams_are_undecodable(content: bytes, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        payloads(content)


def test_the_deserializer_returns_the_stream_as_one_item() -> None:
    content = sse(chunk(0, "a", "stop"))
    answer = response({"stream": True}, content, content_type="text/event-stream")
    context = schemathesis.DeserializationContext(operation=None, case=None)  # type: ignore[arg-type]
    assert event_stream(context, answer) == [payloads(content)]


def test_parse_stream_keeps_the_parser_observations() -> None:
    parsed = parse_stream(b"data: 1\n\nretry: x\ndata: 2")
    assert [e.data for e in parsed.events] == ["1"]
    assert {"invalid-retry", "unterminated-event"} <= set(parsed.observation_counts)
