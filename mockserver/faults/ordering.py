"""Faults in the order of stream chunks: finish chunks and the usage chunk.

Spec: ``CompletionChunk`` ("``finish_reason`` is null until a choice's last chunk") and the
description of ``POST /v1/completions`` (content chunks, then an optional usage chunk, then
``[DONE]``); bug classes 3, 4 and 9 of the research notes.
"""

from __future__ import annotations

from collections.abc import Iterator

from spec import JSON

from .base import Fault, FaultContext
from .registry import register
from .shapes import choices, is_finish_chunk, is_usage_chunk

Chunk = dict[str, JSON]


@register
class UsageBeforeFinish(Fault):
    name = "usage-before-finish"
    description = "The usage chunk is sent before the finish chunks instead of after them."
    breaks = "The usage chunk comes after every choice's finish chunk, right before `[DONE]`."
    hook = "chunks"
    stream = True

    def alter_chunks(self, chunks: Iterator[Chunk], ctx: FaultContext) -> Iterator[Chunk]:
        held: list[Chunk] = []
        for chunk in chunks:
            if is_usage_chunk(chunk):
                yield chunk
                yield from held
                held = []
            elif held or is_finish_chunk(chunk):
                held.append(chunk)
            else:
                yield chunk
        yield from held


@register
class TextAfterFinish(Fault):
    name = "text-after-finish"
    description = "Each choice's last text chunk is sent after its finish chunk."
    breaks = "No text chunk of a choice follows that choice's finish chunk."
    hook = "chunks"
    stream = True

    def alter_chunks(self, chunks: Iterator[Chunk], ctx: FaultContext) -> Iterator[Chunk]:
        pending: dict[int, Chunk] = {}
        for chunk in chunks:
            entries = choices(chunk)
            if len(entries) != 1 or not isinstance(entries[0].get("index"), int):
                yield from pending.values()
                pending.clear()
                yield chunk
                continue
            index = entries[0]["index"]
            if entries[0].get("finish_reason") is None:
                if index in pending:
                    yield pending.pop(index)
                pending[index] = chunk
                continue
            yield chunk
            late = pending.pop(index, None)
            if late is None:  # nothing to move: send an empty text chunk after the finish
                late = {**chunk, "choices": [{**entries[0], "text": "", "finish_reason": None}]}
            yield late
        yield from pending.values()


@register
class FinishDoubled(Fault):
    """A second finish chunk that changes the reason. A plain repeat of the finish chunk (same
    reason, empty text) is what OpenAI sends on a ``length`` finish, and valid: the
    ``finish-repeated-on-length`` variant renders it."""

    name = "finish-doubled"
    description = ("Every finish chunk is sent twice, the second time with another reason "
                   "(stop after length, length after anything else).")
    breaks = "A choice's finish_reason, once sent, is never changed."
    hook = "chunks"
    stream = True

    def alter_chunks(self, chunks: Iterator[Chunk], ctx: FaultContext) -> Iterator[Chunk]:
        for chunk in chunks:
            yield chunk
            if is_finish_chunk(chunk):
                entries = [
                    {**entry, "text": "",
                     "finish_reason": "stop" if entry.get("finish_reason") == "length"
                     else "length"}
                    for entry in choices(chunk) if entry.get("finish_reason") is not None
                ]
                yield {**chunk, "choices": entries}


@register
class FinishMissing(Fault):
    name = "finish-missing"
    description = "No chunk ever carries a finish_reason (the finish chunks say null)."
    breaks = "Each choice's last chunk has a finish_reason from the enum."
    hook = "payload"
    stream = True

    def alter_payload(self, payload: Chunk, ctx: FaultContext) -> Chunk:
        for choice in choices(payload):
            choice["finish_reason"] = None
        return payload
