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
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from json.encoder import encode_basestring

from reference_engine.results import Event, FinishEvent, LogprobEntry, TextEvent, UsageEvent
from spec import JSON

from ..sse import done_event, encode_json, event
from .identity import Identity
from .logprobs import logprobs_object, usage_object
from .profiles import wire_profile
from .responses import OBJECT


def stream_chunks(
    events: Iterable[Event],
    identity: Identity,
    *,
    profile: str,
    include_usage: bool,
    logprobs: bool = False,
    suffix: str | None = None,
) -> Iterator[dict[str, JSON]]:
    """The chunk dicts for ``events`` (lazily: one chunk as each event arrives).

    ``logprobs`` says whether the request asked for them, so that every chunk carries an
    object (possibly with empty arrays) rather than ``null``; ``suffix`` (OpenAI) is appended
    to each finish chunk's text.
    """
    if wire_profile(profile) == "friendli":
        render = _FriendliChunks(identity, logprobs)
        for event in events:
            if isinstance(event, UsageEvent):
                if include_usage:
                    yield render.usage(event)
            else:
                yield render.choice(event)
        return
    openai = _OpenAIChunks(identity, logprobs, include_usage, suffix or "")
    for event in events:
        if isinstance(event, UsageEvent):
            if include_usage:
                yield openai.usage(event)
        else:
            yield openai.choice(event)


class _OpenAIChunks:
    def __init__(self, identity: Identity, logprobs: bool, include_usage: bool, suffix: str):
        self._head: dict[str, JSON] = {
            "id": identity.id,
            "object": OBJECT,
            "created": identity.created,
            "model": identity.model,
        }
        if identity.system_fingerprint is not None:
            self._head["system_fingerprint"] = identity.system_fingerprint
        self._logprobs = logprobs
        self._include_usage = include_usage
        self._suffix = suffix

    def choice(self, event: TextEvent | FinishEvent) -> dict[str, JSON]:
        finish = isinstance(event, FinishEvent)
        choice: dict[str, JSON] = {
            "index": event.index,
            "text": event.text + self._suffix if finish else event.text,
            "logprobs": _logprobs(event.logprobs, self._logprobs),
            "finish_reason": event.finish_reason if isinstance(event, FinishEvent) else None,
        }
        chunk = {**self._head, "choices": [choice]}
        if self._include_usage:
            chunk["usage"] = None
        return chunk

    def usage(self, event: UsageEvent) -> dict[str, JSON]:
        usage = usage_object(event.usage.prompt_tokens, event.usage.completion_tokens)
        return {**self._head, "choices": [], "usage": usage}


class _FriendliChunks:
    def __init__(self, identity: Identity, logprobs: bool):
        self._identity = identity
        self._logprobs = logprobs

    def _chunk(self, choices: list[JSON], **extra: JSON) -> dict[str, JSON]:
        return {
            "id": self._identity.id,
            "model": self._identity.model,
            "object": OBJECT,
            "choices": choices,
            **extra,
            "created": self._identity.created,
        }

    def choice(self, event: TextEvent | FinishEvent) -> dict[str, JSON]:
        choice: dict[str, JSON] = {"index": event.index, "text": event.text}
        if isinstance(event, TextEvent):
            if event.token_id is not None:
                choice["token"] = event.token_id
            choice["finish_reason"] = None
        else:
            choice["finish_reason"] = event.finish_reason
        choice["logprobs"] = _logprobs(event.logprobs, self._logprobs)
        return self._chunk([choice])

    def usage(self, event: UsageEvent) -> dict[str, JSON]:
        usage = usage_object(event.usage.prompt_tokens, event.usage.completion_tokens)
        return self._chunk([], usage=usage)


def _logprobs(entries: tuple[LogprobEntry, ...], requested: bool) -> JSON:
    return logprobs_object(entries) if requested else None


# -- the same stream as SSE bytes, without the chunk dicts ---------------------------------

_MARK = "\x00mock-choices\x00"
_MARK_JSON = encode_json([_MARK])
_NULL = b"null"


def _json_str(text: str) -> bytes:
    """``encode_json(text)`` for a string."""
    return encode_basestring(text).encode("utf-8")


def stream_frames(
    events: Iterable[Event],
    identity: Identity,
    *,
    profile: str,
    include_usage: bool,
    logprobs: bool = False,
    suffix: str | None = None,
) -> Iterator[bytes]:
    """The bytes of ``sse.frames(stream_chunks(...))``, event by event, byte for byte.

    For streams no fault bends (they need the chunks): each token chunk is the identity's
    bytes, fixed for the stream, around its choice, rendered straight to JSON.
    """
    friendli = wire_profile(profile) == "friendli"
    render: _FriendliChunks | _OpenAIChunks = (
        _FriendliChunks(identity, logprobs) if friendli
        else _OpenAIChunks(identity, logprobs, include_usage, suffix or "")
    )
    # The chunk around its choice: a chunk with a marker for a choice, split at the marker.
    # Everything before ``choices`` and after it is the same in every choice chunk.
    sample = render.choice(FinishEvent(0, "stop", "", (), 0, (), 0))
    sample["choices"] = [_MARK]
    before, found, after = encode_json(sample).rpartition(_MARK_JSON[1:-1])
    if not found:  # pragma: no cover - the marker is always there
        raise AssertionError("chunk template")
    before, after = b"data: " + before, after + b"\n\n"
    choice: Callable[[TextEvent | FinishEvent, bytes, str], bytes] = (
        _friendli_choice_bytes if friendli else _openai_choice_bytes
    )
    suffix = "" if friendli else suffix or ""
    for item in events:
        if isinstance(item, UsageEvent):
            if include_usage:
                yield event(encode_json(render.usage(item)))
            continue
        lp = encode_json(logprobs_object(item.logprobs)) if logprobs else _NULL
        yield before + choice(item, lp, suffix) + after
    yield done_event()


def _openai_choice_bytes(item: TextEvent | FinishEvent, lp: bytes, suffix: str) -> bytes:
    if isinstance(item, FinishEvent):
        text, reason = item.text + suffix, _json_str(item.finish_reason)
    else:
        text, reason = item.text, _NULL
    return b'{"index":%d,"text":%s,"logprobs":%s,"finish_reason":%s}' % (
        item.index, _json_str(text), lp, reason)


def _friendli_choice_bytes(item: TextEvent | FinishEvent, lp: bytes, suffix: str) -> bytes:
    if isinstance(item, FinishEvent):
        return b'{"index":%d,"text":%s,"finish_reason":%s,"logprobs":%s}' % (
            item.index, _json_str(item.text), _json_str(item.finish_reason), lp)
    if item.token_id is None:
        return b'{"index":%d,"text":%s,"finish_reason":null,"logprobs":%s}' % (
            item.index, _json_str(item.text), lp)
    return b'{"index":%d,"text":%s,"token":%d,"finish_reason":null,"logprobs":%s}' % (
        item.index, _json_str(item.text), item.token_id, lp)
