"""Faults in the fields that identify a response: ``id``, ``created``, ``model``, ``object``.

Spec: ``CompletionResponse`` / ``CompletionChunk`` (``object: {const: text_completion}``,
``created: {type: integer}``) and bug classes 1 and 34 of the research notes (every chunk of a
stream repeats one identity). FriendliAI's ``created`` is "Unix time in seconds when the token
was sampled", so a ``created`` that changes between chunks is a defect on OpenAI's wire only.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

from spec import JSON

from ..wire.identity import ID_PREFIX
from .base import OPENAI, Fault, FaultContext
from .registry import register

Chunk = dict[str, JSON]


@register
class IdChanges(Fault):
    name = "id-changes"
    description = "Every chunk after the first has a fresh `id`."
    breaks = "Every chunk of a stream has the same `id`."
    hook = "chunks"
    stream = True

    def alter_chunks(self, chunks: Iterator[Chunk], ctx: FaultContext) -> Iterator[Chunk]:
        for position, chunk in enumerate(chunks):
            yield chunk if position == 0 else {**chunk, "id": ID_PREFIX + uuid.uuid4().hex}


@register
class CreatedChanges(Fault):
    name = "created-changes"
    description = "`created` grows by one second on every chunk."
    breaks = "Every chunk of a stream has the same `created`."
    hook = "chunks"
    wires = OPENAI
    stream = True

    def alter_chunks(self, chunks: Iterator[Chunk], ctx: FaultContext) -> Iterator[Chunk]:
        for position, chunk in enumerate(chunks):
            created = chunk.get("created")
            if isinstance(created, int):
                chunk = {**chunk, "created": created + position}
            yield chunk


@register
class ModelChanges(Fault):
    name = "model-changes"
    description = "Every chunk after the first names another model (`<model>-shadow`)."
    breaks = "Every chunk of a stream has the same `model`."
    hook = "chunks"
    stream = True

    def alter_chunks(self, chunks: Iterator[Chunk], ctx: FaultContext) -> Iterator[Chunk]:
        for position, chunk in enumerate(chunks):
            model = chunk.get("model")
            if position and isinstance(model, str):
                chunk = {**chunk, "model": model + "-shadow"}
            yield chunk


@register
class ObjectWrong(Fault):
    name = "object-wrong"
    description = "`object` is `text.completion` instead of `text_completion`."
    breaks = "`object` is `text_completion` in every response and chunk."
    hook = "payload"

    def alter_payload(self, payload: Chunk, ctx: FaultContext) -> Chunk:
        if "object" in payload:
            payload["object"] = "text.completion"
        return payload


@register
class FieldWrongType(Fault):
    name = "field-wrong-type"
    description = '`created` is sent as a string of digits ("1733382157"), not an integer.'
    breaks = "Every field has the schema's type (`created` is an integer)."
    hook = "payload"

    def alter_payload(self, payload: Chunk, ctx: FaultContext) -> Chunk:
        created = payload.get("created")
        if isinstance(created, int) and not isinstance(created, bool):
            payload["created"] = str(created)
        return payload
