"""Server-sent event framing: the one place that turns chunks into ``text/event-stream`` bytes.

Spec: the description of ``POST /v1/completions`` in ``spec/completions.yaml`` ("Streaming
responses are data-only server-sent events: one JSON chunk per ``data:`` line, terminated by
``data: [DONE]``"). Each event is ``data: <compact JSON>\\n\\n``; JSON is compact
(``separators=(",", ":")``) and keeps non-ASCII text as UTF-8 (``ensure_ascii=False``). JSON
never contains a raw newline, so one chunk is always one ``data:`` line.

Framing faults (``mockserver.faults.framing``) bend these helpers on purpose (a missing blank
line, a split payload); nothing else in the mock writes SSE bytes. A stream that no fault bends
is written from an :class:`EventTemplate`: the encoded event of one sample chunk with holes where
its values change, so each token costs one ``%`` format instead of a dict and a JSON encoding.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from operator import itemgetter

from spec import JSON

CONTENT_TYPE = "text/event-stream"
DONE = "[DONE]"
"""The data of the stream's last event."""
EVENT_END = b"\n\n"
DATA_PREFIX = b"data: "


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)
"""``json.dumps`` with these options builds an encoder per call; this one is built once (it
keeps no state between calls, so threads share it)."""


def encode_json(payload: JSON) -> bytes:
    """Compact UTF-8 JSON, the encoding of every body the mock sends (streamed or not)."""
    return _ENCODER.encode(payload).encode("utf-8")


def encode_json_by_choice(payload: JSON) -> bytes:
    """``encode_json(payload)``, byte for byte, encoded one choice at a time.

    The C encoder holds the GIL for a whole call: one 50 MB answer (echo with logprobs on 150
    long prompts) would stall the event loop's thread for a second even when rendered on
    another thread. Between choices the GIL is released.
    """
    choices = payload.get("choices") if isinstance(payload, dict) else None
    if not isinstance(payload, dict) or not isinstance(choices, list) or len(choices) < 2:
        return encode_json(payload)
    spliced = splice_choices(encode_json({**payload, "choices": []}),
                             [encode_json(choice) for choice in choices])
    return encode_json(payload) if spliced is None else spliced


CHOICES_KEY = b'"choices":['


def splice_choices(head: bytes, choices: list[bytes]) -> bytes | None:
    """The encoded body ``head`` (encoded with ``"choices":[]``) with the encoded ``choices``
    in that list, in order: the one place where an answer encoded piece by piece is joined.

    Inside string values every quote is escaped, so the only ``"choices":[]`` in the encoded
    head is the key itself; None if it has none.
    """
    at = head.find(CHOICES_KEY + b"]")
    if at < 0:
        return None
    cut = at + len(CHOICES_KEY)
    return head[:cut] + b",".join(choices) + head[cut:]


def slot(position: int) -> str:
    """The placeholder for value ``position`` in the sample payload of an :func:`event_template`.

    NUL never appears raw in encoded JSON, so the encoded placeholder cannot be mistaken for
    text unless a string of the payload holds the very same characters (then
    :func:`event_template` refuses).
    """
    return f"\x00mock-slot-{position}\x00"


class EventTemplate:
    """The bytes of one ``data:`` event with holes for a few JSON values.

    ``fill(values)`` equals ``event(encode_json(payload))`` for the sample payload with each
    ``slot(i)`` replaced by the value whose encoding is ``values[i]``, byte for byte. ``fill``
    is a plain attribute (a bound ``bytes.__mod__`` when the holes come in the values' order):
    it runs once per token of every stream no fault bends.
    """

    __slots__ = ("fill",)

    fill: Callable[[tuple[bytes | int, ...]], bytes]
    """The event with ``values`` in its holes: each already JSON (``b'"text"'``) or an int,
    one per hole, in the order of the holes' slot numbers."""

    def __init__(self, format_: bytes, holes: list[int]) -> None:
        """``format_``: the event with ``%s`` or ``%d`` for each hole; ``holes``: their slot
        numbers."""
        if holes == sorted(holes):
            self.fill = format_.__mod__
        else:
            pick = itemgetter(*holes)  # two holes or more: it returns a tuple
            self.fill = lambda values: format_ % pick(values)


def event_template(payload: JSON, slots: int, *,
                   integers: Collection[int] = ()) -> EventTemplate:
    """The event of ``payload``, whose values ``slot(0)`` .. ``slot(slots - 1)`` are holes.

    The holes in ``integers`` take ints, never bools (``%d`` writes an int's JSON), the others
    bytes. Raises ``ValueError`` unless each placeholder occurs exactly once in the encoded
    payload and no other does (a string of the payload holds one: the caller encodes its
    chunks instead).
    """
    data = event(encode_json(payload)).replace(b"%", b"%%")
    markers = [_encoded_slot(position) for position in range(slots)]
    if data.count(_SLOT_PREFIX) != slots or any(data.count(m) != 1 for m in markers):
        raise ValueError(f"the payload does not hold slots 0 to {slots - 1} once each")
    holes = sorted(range(slots), key=lambda position: data.index(markers[position]))
    for position, marker in enumerate(markers):
        data = data.replace(marker, b"%d" if position in integers else b"%s")
    return EventTemplate(data, holes)


_SLOT_PREFIX = b"\\u0000mock-slot-"
"""How every encoded placeholder starts."""


@functools.cache
def _encoded_slot(position: int) -> bytes:
    return encode_json(slot(position))


def event(data: bytes, *, end: bytes = EVENT_END) -> bytes:
    """One ``data:`` event around ``data`` (which must not contain a newline)."""
    return DATA_PREFIX + data + end


def done_event() -> bytes:
    """``data: [DONE]\\n\\n``."""
    return event(DONE.encode("ascii"))


def error_ending(envelope: JSON) -> bytes:
    """An error envelope as one event, then ``[DONE]``: how a stream that cannot go on ends
    (and how the ``error-in-stream`` fault answers invalid input)."""
    return event(encode_json(envelope)) + done_event()


@dataclass(frozen=True)
class Frame:
    """One event as it goes on the wire, with the chunk it carries (or ``"[DONE]"``).

    Keeping the payload next to the bytes lets framing faults find, say, the first finish
    chunk without parsing their own output.
    """

    payload: JSON
    data: bytes

    @property
    def is_done(self) -> bool:
        return self.payload == DONE

    @property
    def carries_choices(self) -> bool:
        """A chunk with at least one choice (a token, echo text or a finish)."""
        return isinstance(self.payload, dict) and bool(self.payload.get("choices"))


def chunk_frame(chunk: JSON) -> Frame:
    """The frame of one JSON chunk (or of an error envelope sent inside a stream)."""
    return Frame(chunk, event(encode_json(chunk)))


def done_frame() -> Frame:
    return Frame(DONE, done_event())


def frames(chunks: Iterable[JSON]) -> Iterator[Frame]:
    """Frame every chunk, then ``[DONE]``: a complete, correct stream."""
    for chunk in chunks:
        yield chunk_frame(chunk)
    yield done_frame()
