"""SSE parser: valid variants are silent and equivalent; every break is observed."""

from __future__ import annotations

import json

import pytest

from conformance.sse import SSEEvent, SSEParser, codes, is_done_sentinel


def parse(stream: bytes, *, split: int | None = None, **limits: int) -> tuple[SSEParser, list]:
    parser = SSEParser(**limits)
    events: list[SSEEvent] = []
    if split is None:
        events += parser.feed(stream, 0.0)
    else:
        for i in range(0, len(stream), split):
            events += parser.feed(stream[i : i + split], float(i))
    parser.close(99.0)
    return parser, events


def fields(events: list[SSEEvent]) -> list[tuple]:
    return [(e.data, e.event, e.id, e.retry) for e in events]


def obs_codes(parser: SSEParser) -> list[str]:
    return [o.code for o in parser.observations]


CANONICAL = b"data: x\n\ndata: y\n\n"


@pytest.mark.parametrize(
    "stream",
    [
        b"data:x\n\ndata:y\n\n",
        b"data: x\n\ndata: y\n\n",
        b"data: x\r\n\r\ndata: y\r\n\r\n",
        b"data: x\r\rdata: y\r\r",
        b"data: x\r\n\ndata: y\r\r\n",
        b": comment\ndata: x\n\n:\n\ndata: y\n: trailing comment\n\n",
        b"\xef\xbb\xbfdata: x\n\ndata: y\n\n",
        b"\n\n\ndata: x\n\n\n\ndata: y\n\n",
        b"data: x\nevent\n\ndata: y\nevent:\n\n",
    ],
)
def test_valid_variants_are_equivalent_and_silent(stream: bytes) -> None:
    parser, events = parse(stream)
    assert fields(events) == [("x", None, None, None), ("y", None, None, None)]
    assert [c for c in obs_codes(parser) if c != codes.BOM] == []


def test_bom_is_informational_and_only_one_is_stripped() -> None:
    parser, events = parse(b"\xef\xbb\xbfdata: x\n\n")
    assert obs_codes(parser) == [codes.BOM]
    assert events[0].offset == 3 and events[0].raw == b"data: x\n\n"
    parser, events = parse(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\n")
    assert events == [] and codes.UNKNOWN_FIELD in obs_codes(parser)


@pytest.mark.parametrize("split", [1, 2, 3])
def test_bom_split_across_chunks(split: int) -> None:
    parser, events = parse(b"\xef\xbb\xbfdata: x\n\n", split=split)
    assert fields(events) == [("x", None, None, None)]
    assert obs_codes(parser) == [codes.BOM]


def test_bom_prefix_only_stream() -> None:
    parser, events = parse(b"\xef\xbb")
    assert events == [] and obs_codes(parser) == [codes.UNTERMINATED_LINE]


def test_only_one_space_after_colon_is_stripped() -> None:
    _, events = parse(b"data:  two\ndata:\tx\ndata\ndata:\n\n")
    assert events[0].data == " two\n\tx\n\n"


def test_multiline_data_and_fields() -> None:
    stream = b"event: completion\nid: 7\nretry: 1500\ndata: a\ndata: b\n\ndata: c\n\n"
    parser, events = parse(stream)
    assert fields(events) == [("a\nb", "completion", "7", 1500), ("c", None, "7", None)]
    assert parser.reconnection_time == 1500 and parser.last_event_id == "7"
    assert events[0].raw == stream[: stream.index(b"data: c")]
    assert events[1].offset == stream.index(b"data: c")
    assert parser.observations == ()


def test_empty_data_line_dispatches_but_no_data_does_not() -> None:
    _, events = parse(b"data\n\nevent: x\nid: 3\n\ndata:\n\n")
    assert fields(events) == [("", None, None, None), ("", None, "3", None)]


def test_id_resets_with_empty_value_and_ignores_nul() -> None:
    parser, events = parse(b"id: 1\ndata: a\n\nid: 2\x00\ndata: b\n\nid\ndata: c\n\n")
    assert [e.id for e in events] == ["1", "1", None]
    assert obs_codes(parser) == [codes.INVALID_ID]


def test_comments_are_recorded_with_offsets() -> None:
    parser, events = parse(b": ping\n\ndata: x\n:inner\n\n")
    assert [(c.text, c.offset) for c in parser.comments] == [(" ping", 0), ("inner", 16)]
    assert events[0].raw == b"data: x\n:inner\n\n" and events[0].offset == 8


def test_comment_before_event_does_not_move_first_byte_time() -> None:
    parser = SSEParser()
    assert parser.feed(b": keepalive\n", 1.0) == []
    (event,) = parser.feed(b"data: x\n\n", 2.0)
    assert event.first_byte_at == 2.0 and event.dispatched_at == 2.0


def test_times_follow_chunks() -> None:
    parser = SSEParser()
    assert parser.feed(b"da", 1.0) == []
    assert parser.feed(b"ta: x\n", 2.0) == []
    (event,) = parser.feed(b"\ndata: y", 3.0)
    assert (event.first_byte_at, event.dispatched_at) == (1.0, 3.0)
    (event,) = parser.feed(b"\n\n", 4.0)
    assert (event.first_byte_at, event.dispatched_at, event.data) == (3.0, 4.0, "y")


def test_cr_at_chunk_end_dispatches_immediately_and_skips_following_lf() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: x\r", 1.0) == []
    expected = SSEEvent("x", None, None, None, b"data: x\r\n\r", 0, 1.0, 2.0)
    assert parser.feed(b"\n\r", 2.0) == [expected]
    assert parser.feed(b"\ndata: y\r\r", 3.0)[0].data == "y"
    assert parser.close(4.0) == [] and parser.observations == ()


def test_lone_cr_then_lf_in_next_chunk_is_one_line_end() -> None:
    # "data: x\r" + "\n" + "\n": CRLF then LF, exactly one blank line
    parser = SSEParser()
    events = parser.feed(b"data: x\r", 0) + parser.feed(b"\n", 1) + parser.feed(b"\n", 2)
    assert fields(events) == [("x", None, None, None)] and events[0].raw == b"data: x\r\n\n"


def test_unknown_field_and_case_sensitivity() -> None:
    parser, events = parse(b"Data: x\nfoo: bar\ndata: y\n\n")
    assert fields(events) == [("y", None, None, None)]
    assert obs_codes(parser) == [codes.UNKNOWN_FIELD, codes.UNKNOWN_FIELD]
    assert parser.observations[1].offset == 8 and parser.observations[1].raw == b"foo: bar"


@pytest.mark.parametrize("value", [b"", b"1.5", b"-1", b"  10", b"1e3", b"\xd9\xa1"])
def test_invalid_retry_is_ignored_and_observed(value: bytes) -> None:
    parser, events = parse(b"retry: 10\n\nretry:" + value + b"\ndata: x\n\n")
    assert events[0].retry is None and parser.reconnection_time == 10
    assert obs_codes(parser) == [codes.INVALID_RETRY]


def test_invalid_utf8_is_replaced_and_observed() -> None:
    parser, events = parse(b"data: a\xffb\n\n: c\xc3\n\n")
    assert events[0].data == "a\ufffdb"
    assert [(o.code, o.offset) for o in parser.observations] == [
        (codes.INVALID_UTF8, 7),
        (codes.INVALID_UTF8, 14),
    ]
    assert parser.comments[0].text == " c\ufffd"


def test_multibyte_character_split_across_chunks_is_fine() -> None:
    stream = "data: héllo ✓ 😀\n\n".encode()
    for split in range(1, 8):
        parser, events = parse(stream, split=split)
        assert events[0].data == "héllo ✓ 😀" and parser.observations == ()


def test_unterminated_last_event_is_discarded_and_observed() -> None:
    parser, events = parse(b'data: {"a": 1}\n\ndata: {"b": 2}\n')
    assert fields(events) == [('{"a": 1}', None, None, None)]
    (obs,) = parser.observations
    assert obs.code == codes.UNTERMINATED_EVENT and obs.offset == 16
    assert parser.discarded is not None and parser.discarded.data == '{"b": 2}'


def test_unterminated_data_line_without_line_end() -> None:
    parser, events = parse(b"data: x\n\ndata: [DONE]")
    assert len(events) == 1
    assert obs_codes(parser) == [codes.UNTERMINATED_LINE, codes.UNTERMINATED_EVENT]
    assert parser.observations[0].raw == b"data: [DONE]"


def test_trailing_comment_or_field_without_data_is_not_an_unterminated_event() -> None:
    assert obs_codes(parse(b"data: x\n\n: bye\n")[0]) == []
    assert obs_codes(parse(b"data: x\n\nevent: end\n")[0]) == []
    assert obs_codes(parse(b"data: x\n\n: bye")[0]) == [codes.UNTERMINATED_LINE]


def test_line_too_long_in_one_chunk_halts() -> None:
    stream = b"data: ok\n\ndata: " + b"a" * 200 + b"\n\ndata: z\n\n"
    parser, events = parse(stream, max_line_bytes=100)
    assert [e.data for e in events] == ["ok"]
    assert parser.halted == codes.LINE_TOO_LONG and obs_codes(parser) == [codes.LINE_TOO_LONG]
    assert parser.observations[0].offset == 10


def test_line_too_long_without_line_end_is_not_buffered() -> None:
    parser = SSEParser(max_line_bytes=1000)
    parser.feed(b"data: ", 0.0)
    for _ in range(100):
        parser.feed(b"a" * 64, 0.0)
        if parser.halted:
            break
    assert parser.halted == codes.LINE_TOO_LONG and parser.bytes_received < 1100
    assert len(parser.observations[0].raw) == 512
    assert parser.feed(b"\n\ndata: more\n\n", 1.0) == [] and parser.close(2.0) == []


def test_event_too_large_halts() -> None:
    parser, events = parse(b"data: 1\n\n" + b"data: xxxxxxxxxx\n" * 20 + b"\n", max_event_bytes=100)
    assert [e.data for e in events] == ["1"]
    assert parser.halted == codes.EVENT_TOO_LARGE and parser.observations[0].offset == 9


def test_line_exactly_at_limit_is_fine() -> None:
    parser, events = parse(b"data:" + b"a" * 95 + b"\r\n\r\n", max_line_bytes=100)
    assert events[0].data == "a" * 95 and parser.observations == ()


def test_observations_are_capped_but_counted() -> None:
    parser, _ = parse(b"x\n" * 500, max_observations_per_code=10)
    assert len(parser.observations) == 10
    assert parser.observation_counts == {codes.UNKNOWN_FIELD: 500}


def test_feed_after_close_raises() -> None:
    parser = SSEParser()
    parser.close(0.0)
    with pytest.raises(RuntimeError):
        parser.feed(b"data: x\n\n", 1.0)


def test_done_sentinel() -> None:
    _, events = parse(b"data: [DONE]\n\ndata:  [DONE]\n\n")
    assert [is_done_sentinel(e) for e in events] == [True, False]


def test_ten_thousand_events_parse_cleanly() -> None:
    """Many events fed in socket-sized pieces (the speed goal, 10,000 in under 0.1 s, is
    measured by benchmarks/bench_sse.py, not asserted here)."""
    body = b"".join(
        b"data: " + json.dumps({"choices": [{"text": f" t{i}", "index": 0}]}).encode() + b"\n\n"
        for i in range(10_000)
    )
    parser, events = parse(body, split=4096)
    assert len(events) == 10_000 and parser.observations == ()
    assert json.loads(events[-1].data)["choices"][0]["text"] == " t9999"
