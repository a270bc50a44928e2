"""Property tests: any valid stream, split anywhere, parses to its model with no observations."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.sse import SSEEvent, SSEParser

LINE_ENDS = st.sampled_from([b"\n", b"\r\n", b"\r"])
# field values: any text without CR/LF (they cannot occur inside a line); NUL is fine in data
VALUES = st.text(st.characters(codec="utf-8", exclude_characters="\r\n"))
IDS = st.text(st.characters(codec="utf-8", exclude_characters="\r\n\x00"))


@st.composite
def streams(draw: st.DrawFn) -> tuple[bytes, list[tuple]]:
    """A valid stream plus the events a browser would dispatch from it."""
    out = bytearray(draw(st.sampled_from([b"", b"\xef\xbb\xbf"])))
    expected: list[tuple] = []
    last_id = ""

    def field(name: str, value: str) -> None:
        sep = ": " if value.startswith(" ") or draw(st.booleans()) else ":"
        if value == "" and draw(st.booleans()):
            sep = ""  # a line without a colon: field name, empty value
        out.extend(f"{name}{sep}{value}".encode() + draw(LINE_ENDS))

    for _ in range(draw(st.integers(0, 6))):
        if draw(st.booleans()):
            out.extend(b":" + draw(VALUES).encode() + draw(LINE_ENDS))
        data = draw(st.lists(VALUES, max_size=3))
        event_type = draw(st.one_of(st.none(), VALUES))
        new_id = draw(st.one_of(st.none(), IDS))
        retry = draw(st.one_of(st.none(), st.integers(0, 10**12)))
        if event_type is not None:
            field("event", event_type)
        if new_id is not None:
            field("id", new_id)
            last_id = new_id
        if retry is not None:
            field("retry", str(retry))
        for value in data:
            field("data", value)
        blank = draw(LINE_ENDS)
        if blank == b"\n" and out.endswith(b"\r"):
            blank = b"\r\n"  # a lone LF right after a CR would complete a CRLF, not end a line
        out.extend(blank)
        if data:
            expected.append(("\n".join(data), event_type or None, last_id or None, retry))
    return bytes(out), expected


def run(stream: bytes, cuts: list[int]) -> tuple[list[SSEEvent], SSEParser]:
    parser = SSEParser()
    events: list[SSEEvent] = []
    bounds = [0, *sorted(set(cuts)), len(stream)]
    for i, (lo, hi) in enumerate(itertools.pairwise(bounds)):
        events += parser.feed(stream[lo:hi], float(i))
    parser.close(float(len(bounds)))
    return events, parser


def canonical(event: SSEEvent, stream: bytes) -> tuple:
    """Event identity independent of chunking.

    A CR that ends a chunk dispatches at once, so a LF right after it (the second half of a
    CRLF) is only part of ``raw`` when it arrived in the same chunk.
    """
    raw = event.raw
    end = event.offset + len(raw)
    if raw.endswith(b"\r") and stream[end : end + 1] == b"\n":
        raw += b"\n"
    return (event.data, event.event, event.id, event.retry, event.offset, raw)


@settings(max_examples=300, deadline=None)
@given(streams(), st.data())
def test_any_split_of_a_valid_stream_gives_the_model_events(
    case: tuple[bytes, list[tuple]], data: st.DataObject
) -> None:
    stream, expected = case
    cuts = data.draw(st.lists(st.integers(0, len(stream)), max_size=12))
    whole, parser = run(stream, [])
    split, split_parser = run(stream, cuts)
    assert [(e.data, e.event, e.id, e.retry) for e in whole] == expected
    assert [canonical(e, stream) for e in split] == [canonical(e, stream) for e in whole]
    assert [o.code for o in parser.observations if o.code != "bom"] == []
    assert split_parser.observations == parser.observations
    for event in whole:
        assert stream[event.offset : event.offset + len(event.raw)] == event.raw


def test_every_split_position_of_a_mixed_stream() -> None:
    stream = (
        b"\xef\xbb\xbf: hi\r\nevent: a\rid: 1\r\ndata: x\ndata:y\r\n\r"
        b"retry: 5\ndata\n\r\n:c\n\ndata: \xc3\xa9\xe2\x9c\x93\r\r"
    )
    whole, parser = run(stream, [])
    assert [(e.data, e.event, e.id, e.retry) for e in whole] == [
        ("x\ny", "a", "1", None),
        ("", None, "1", 5),
        ("\u00e9\u2713", None, "1", None),
    ]
    for i in range(len(stream) + 1):
        for j in range(i, min(i + 3, len(stream) + 1)):
            split, split_parser = run(stream, [i, j])
            assert [canonical(e, stream) for e in split] == [canonical(e, stream) for e in whole]
            assert split_parser.observations == parser.observations
