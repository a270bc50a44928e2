"""SSE framing (mockserver.sse): compact UTF-8 JSON, one data line per event, then [DONE]."""

from __future__ import annotations

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
