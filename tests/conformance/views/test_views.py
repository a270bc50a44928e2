"""Pure readers of recordings: payload classification, choice assembly, logprob tokens."""

from __future__ import annotations

import pytest
from harness_support import chunk, frames, sse_exchange

from conformance.views import (
    StreamView,
    Unassemblable,
    assemble,
    char_offsets,
    joined_text_matches,
    json_path,
    parse_payload,
    token_bytes,
)


def test_payload_kinds() -> None:
    assert parse_payload("[DONE]")[0] == "done"
    assert parse_payload('{"choices": []}')[0] == "usage"
    assert parse_payload('{"error": {"message": "x"}}')[0] == "error"
    assert parse_payload('{"choices": [{"index": 0}]}')[0] == "chunk"
    assert parse_payload("{oops")[0] == "invalid"
    assert parse_payload("[1]")[0] == "invalid"
    # a usage object on a chunk whose choices say nothing is the usage chunk, malformed
    empty = '{"choices": [{"index": 0, "text": "", "finish_reason": null}], "usage": {}}'
    assert parse_payload(empty)[0] == "usage"
    # a copy of the usage on a finish chunk stays a chunk
    finish = '{"choices": [{"index": 0, "text": "", "finish_reason": "stop"}], "usage": {}}'
    assert parse_payload(finish)[0] == "chunk"


def test_events_after_done_are_kept_apart() -> None:
    raw = frames(chunk(0, "a"), chunk(0, "b", "stop")) + b'data: {"choices": []}\n\n'
    view = StreamView(sse_exchange(raw))
    assert len(view.chunks) == 2 and len(view.after_done) == 1 and view.usage_chunks == []


def test_assembly_joins_text_per_index() -> None:
    raw = frames(chunk(0, "He"), chunk(1, "Wo"), chunk(0, "llo", "length"), chunk(1, "", "stop"))
    choices = assemble(StreamView(sse_exchange(raw)), 2)
    assert choices[0].text == "Hello" and choices[0].finish_reason == "length"
    assert choices[1].text == "Wo" and choices[1].finish_reason == "stop"


@pytest.mark.parametrize(
    ("payloads", "reason"),
    [
        ((chunk(0, "a"),), "no finish chunk"),
        ((chunk(0, "a", "stop"), chunk(0, "b")), "after its finish"),
        ((chunk(0, "a", "stop"), chunk(3, "b", "stop")), "outside"),
        ((chunk(0, "a", "stop"),), "no chunk for choice indices [1]"),
    ],
)
def test_assembly_refuses_broken_structure(payloads: tuple, reason: str) -> None:
    expected = 2 if "indices [1]" in reason else 1
    with pytest.raises(Unassemblable, match=reason.replace("[", r"\[").replace("]", r"\]")):
        assemble(StreamView(sse_exchange(frames(*payloads))), expected)


def test_assembly_reads_past_left_out_keys() -> None:
    """LiteLLM's shape: a finish chunk without ``text``, then ``{"index": 0}`` on the usage
    chunk. Neither changes the joined text, so the texts are still judged (SCHEMA-001 and
    USAGE-004 judge the shapes)."""
    raw = frames(
        chunk(0, "a"),
        {"choices": [{"index": 0, "finish_reason": "stop"}]},
        {"choices": [{"index": 0}], "usage": {"prompt_tokens": 1}},
    )
    choice = assemble(StreamView(sse_exchange(raw)), 1)[0]
    assert choice.text == "a" and choice.finish_reason == "stop"


def test_assembly_refuses_a_text_that_is_not_a_string() -> None:
    raw = frames({"choices": [{"index": 0, "text": 3, "finish_reason": "stop"}]})
    with pytest.raises(Unassemblable, match="no text string"):
        assemble(StreamView(sse_exchange(raw)), 1)


def test_empty_string_finish_reason_does_not_finish() -> None:
    raw = frames(chunk(0, "a", ""), chunk(0, "b", "stop"))
    assert assemble(StreamView(sse_exchange(raw)), 1)[0].text == "ab"


def test_token_display_forms() -> None:
    assert token_bytes("bytes:\\xe3\\x81") == b"\xe3\x81"
    assert token_bytes(" a") == b" a"
    assert token_bytes("bytes:not-escapes") == b"bytes:not-escapes"
    tokens = ["bytes:\\xe3\\x81", "bytes:\\xae", " x"]
    assert joined_text_matches(tokens, "\u306e x")
    assert not joined_text_matches(tokens, "\u306e y")
    assert joined_text_matches(["ab", "bytes:\\xe3"], "ab")  # a cut partial character
    assert joined_text_matches(["ab", "cd"], "abc", prefix=True)
    assert char_offsets(["a", "bytes:\\xe3\\x81", "bytes:\\xae", "b"]) == [0, 1, None, 2]


def test_json_paths() -> None:
    assert json_path(["choices", 1, "finish_reason"]) == "choices[1].finish_reason"
    assert json_path([]) == "$"
