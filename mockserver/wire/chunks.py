"""Stream chunks, from the engine's events: one chunk per event, in the engine's order.

Spec: ``CompletionChunk`` / ``UsageChunk`` and ``FriendliCompletionChunk`` /
``FriendliUsageChunk`` in ``spec/completions.yaml``. Per choice: one chunk per token (its new
text, ``finish_reason: null``), then the finish chunk (the text still held back, and the
reason); choices interleave round-robin. With ``stream_options.include_usage`` a usage chunk
with ``choices: []`` follows ("an extra chunk comes before ``[DONE]``").

OpenAI's text: "All other chunks will also include a ``usage`` field, but with a null value" --
which it says of streams *with* ``include_usage``. The mock therefore puts ``"usage": null`` on
every other chunk when ``include_usage`` is true, and leaves the key out otherwise (as OpenAI's
servers do); both satisfy the ``openai`` profile (``usage_key_on_chunks``), and no chunk ever
carries a usage object unasked. FriendliAI chunks never carry the key; their finish chunk has
no ``token``.

One layout of each: :class:`_Layout` places a choice's fields and the chunk around it. The
chunk dicts (which faults bend) are that layout filled with values; the bytes of a stream no
fault bends are the same layout encoded with holes (:func:`mockserver.sse.event_template`),
then filled with each event's encoded values. The holes include ``id`` and ``created``, so one
template serves every stream of a model and wire (they are kept, see ``_templates``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from json.encoder import encode_basestring

from reference_engine.results import Event, FinishEvent, TextEvent, UsageEvent
from spec import JSON

from .. import sse
from .formats import FRIENDLI_WIRE, Wire
from .identity import Identity
from .logprobs import logprobs_object, usage_object
from .responses import OBJECT

_NULL = b"null"
_VALUES = 7
"""A choice chunk's values, in the order the layout takes them: id, created, index, text,
logprobs, finish_reason, token (last, since only FriendliAI's token chunks have one)."""
_INTEGERS = frozenset({1, 2, 6})
"""The values given as ints (created, index and token): ``%d`` writes them faster than a
separate encoding would."""


def stream_chunks(
    events: Iterable[Event],
    identity: Identity,
    *,
    wire: Wire,
    include_usage: bool,
    logprobs: bool = False,
    suffix: str | None = None,
) -> Iterator[dict[str, JSON]]:
    """The chunk dicts for ``events`` (lazily: one chunk as each event arrives).

    ``logprobs`` says whether the request asked for them, so that every chunk carries an
    object (possibly with empty arrays) rather than ``null``; ``suffix`` (OpenAI) is appended
    to each finish chunk's text.
    """
    layout = _Layout.of(identity, wire=wire, include_usage=include_usage)
    tail, friendli = _suffix(wire, suffix), layout.friendli
    for item in events:
        if isinstance(item, UsageEvent):
            if include_usage:
                yield layout.usage_chunk(identity, item)
            continue
        index, text, reason, token = _values(item, tail, friendli)
        entries = logprobs_object(item.logprobs) if logprobs else None
        choice = layout.choice(index, text, entries, reason, token)
        yield layout.chunk(identity.id, identity.created, [choice])


def stream_frames(
    events: Iterable[Event],
    identity: Identity,
    *,
    wire: Wire,
    include_usage: bool,
    logprobs: bool = False,
    suffix: str | None = None,
) -> Iterator[bytes]:
    """The bytes of ``sse.frames(stream_chunks(...))``, event by event, byte for byte.

    For streams no fault bends (they need the chunks): each choice chunk is its layout's
    template filled with the event's values, each encoded on its own.
    """
    layout = _Layout.of(identity, wire=wire, include_usage=include_usage)
    id_, created = _json_str(identity.id), identity.created
    try:
        plain, with_token = (template.fill for template in _templates(layout))
    except ValueError:  # the model's name holds a placeholder: encode every chunk
        chunks = stream_chunks(events, identity, wire=wire, include_usage=include_usage,
                               logprobs=logprobs, suffix=suffix)
        yield from (frame.data for frame in sse.frames(chunks))
        return
    tail, friendli = _suffix(wire, suffix), layout.friendli
    for item in events:
        if isinstance(item, UsageEvent):
            if include_usage:
                yield sse.event(sse.encode_json(layout.usage_chunk(identity, item)))
            continue
        # _values(item, tail, friendli), spelled out: this runs once per token.
        encoded = sse.encode_json(logprobs_object(item.logprobs)) if logprobs else _NULL
        if isinstance(item, FinishEvent):
            yield plain((id_, created, item.index, _json_str(item.text + tail), encoded,
                         _json_str(item.finish_reason)))
        elif friendli and item.token_id is not None:
            yield with_token((id_, created, item.index, _json_str(item.text), encoded, _NULL,
                              item.token_id))
        else:
            yield plain((id_, created, item.index, _json_str(item.text), encoded, _NULL))
    yield sse.done_event()


def _suffix(wire: Wire, suffix: str | None) -> str:
    """What each finish chunk's text ends with: OpenAI's ``suffix``; FriendliAI has none."""
    return "" if wire == FRIENDLI_WIRE else suffix or ""


def _values(event: TextEvent | FinishEvent, suffix: str,
            friendli: bool) -> tuple[int, str, str | None, int | None]:
    """``(index, text, finish_reason, token)`` of ``event``'s choice (logprobs aside)."""
    if isinstance(event, FinishEvent):
        return event.index, event.text + suffix, event.finish_reason, None
    return event.index, event.text, None, event.token_id if friendli else None


@functools.lru_cache(maxsize=64)
def _templates(layout: _Layout) -> tuple[sse.EventTemplate, sse.EventTemplate]:
    """A choice chunk's event with holes for its values (see ``_VALUES``): without a token,
    and with one (the same template on OpenAI's route, which has no token).

    Kept per layout (a handful: FriendliAI's adapter routes add model names, hence the bound).
    Raises ``ValueError`` when the model's name holds a placeholder.
    """
    id_, created, index, text, logprobs, reason, token = (
        sse.slot(position) for position in range(_VALUES))
    plain = sse.event_template(
        layout.chunk(id_, created, [layout.choice(index, text, logprobs, reason, None)]),
        _VALUES - 1, integers=_INTEGERS)
    if not layout.friendli:
        return plain, plain
    with_token = sse.event_template(
        layout.chunk(id_, created, [layout.choice(index, text, logprobs, reason, token)]),
        _VALUES, integers=_INTEGERS)
    return plain, with_token


@dataclass(frozen=True, slots=True)
class _Layout:
    """One stream's layout, per wire: a choice's fields and the chunk around it.

    OpenAI: ``{id, object, created, model, system_fingerprint?, choices, usage?}`` around
    ``{index, text, logprobs, finish_reason}``. FriendliAI: ``{id, model, object, choices,
    usage?, created}`` around ``{index, text, token?, finish_reason, logprobs}``. It holds
    what is the same for every stream of a model and route (``id`` and ``created`` are not),
    and compares by it, so templates can be kept per layout.
    """

    friendli: bool
    include_usage: bool
    model: str
    system_fingerprint: str | None

    @classmethod
    def of(cls, identity: Identity, *, wire: Wire, include_usage: bool) -> _Layout:
        return cls(wire == FRIENDLI_WIRE, include_usage, identity.model,
                   identity.system_fingerprint)

    def choice(self, index: JSON, text: JSON, logprobs: JSON, finish_reason: JSON,
               token: JSON) -> dict[str, JSON]:
        """The choice of one chunk; a ``token`` of None leaves the key out."""
        if not self.friendli:
            return {"index": index, "text": text, "logprobs": logprobs,
                    "finish_reason": finish_reason}
        choice: dict[str, JSON] = {"index": index, "text": text}
        if token is not None:
            choice["token"] = token
        choice["finish_reason"] = finish_reason
        choice["logprobs"] = logprobs
        return choice

    def chunk(self, id_: JSON, created: JSON, choices: list[JSON],
              usage: dict[str, JSON] | None = None) -> dict[str, JSON]:
        """The chunk around ``choices``; ``usage`` is the usage chunk's object. OpenAI's
        other chunks carry ``"usage": null`` when usage was asked for."""
        if self.friendli:
            chunk: dict[str, JSON] = {"id": id_, "model": self.model, "object": OBJECT,
                                      "choices": choices}
            if usage is not None:
                chunk["usage"] = usage
            chunk["created"] = created
            return chunk
        chunk = {"id": id_, "object": OBJECT, "created": created, "model": self.model}
        if self.system_fingerprint is not None:
            chunk["system_fingerprint"] = self.system_fingerprint
        chunk["choices"] = choices
        if usage is not None or self.include_usage:
            chunk["usage"] = usage
        return chunk

    def usage_chunk(self, identity: Identity, event: UsageEvent) -> dict[str, JSON]:
        """The last chunk before ``[DONE]`` when usage was asked for: no choices."""
        usage = usage_object(event.usage.prompt_tokens, event.usage.completion_tokens)
        return self.chunk(identity.id, identity.created, [], usage)


def _json_str(text: str) -> bytes:
    """``encode_json(text)`` for a string."""
    return encode_basestring(text).encode("utf-8")
