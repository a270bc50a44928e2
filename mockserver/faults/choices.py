"""Faults in choices: finish_reason values, indices, and FriendliAI's per-choice fields.

Spec: ``FinishReason`` (``enum: [stop, length, content_filter]``), ``ChunkFinishReason``
(null before the last chunk), ``CompletionRequest.prompt`` ("choice index = prompt index * n +
k"), ``FriendliCompletionChoice`` (``seed``; ``tokens``: "The generated token ids") and
``FriendliChunkChoice`` (``token``: "The sampled token id"); bug classes 2, 5, 16 and 17 of the
research notes.
"""

from __future__ import annotations

from collections.abc import Iterator

from spec import JSON

from ..variants import StreamContext
from ..variants.chunks import FinishOnLastToken
from .base import FRIENDLI, Fault, FaultContext
from .registry import register
from .shapes import choices

Chunk = dict[str, JSON]
_LAST_TOKEN_CARRIES_FINISH = FinishOnLastToken()

Payload = dict[str, JSON]


@register
class FinishReasonNonstandard(Fault):
    name = "finish-reason-nonstandard"
    description = "finish_reason is `eos` where it should be `stop`."
    breaks = "finish_reason is one of stop, length, content_filter."
    hook = "payload"

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        for choice in choices(payload):
            if choice.get("finish_reason") == "stop":
                choice["finish_reason"] = "eos"
        return payload


@register
class FinishReasonEmptyString(Fault):
    name = "finish-reason-empty-string"
    description = 'Chunks before a choice\'s last carry finish_reason "" instead of null.'
    breaks = "finish_reason is null on every chunk but a choice's last."
    hook = "payload"
    stream = True

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        for choice in choices(payload):
            if choice.get("finish_reason") is None:
                choice["finish_reason"] = ""
        return payload


@register
class LengthReportedAsStop(Fault):
    name = "length-reported-as-stop"
    description = "finish_reason says `stop` when max_tokens cut the text (`length`)."
    breaks = "finish_reason is `length` when max_tokens (or the context) ended the choice."
    hook = "payload"

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        for choice in choices(payload):
            if choice.get("finish_reason") == "length":
                choice["finish_reason"] = "stop"
        return payload


@register
class IndexAlwaysZero(Fault):
    name = "index-always-zero"
    description = "Every choice says `index: 0`, whatever its prompt and n."
    breaks = "Choice indices are 0..prompts*n-1, index = prompt index * n + k."
    hook = "payload"

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        for choice in choices(payload):
            choice["index"] = 0
        return payload


@register
class ChoiceMissing(Fault):
    name = "choice-missing"
    description = "The last choice (index prompts*n-1) is dropped from the body or stream."
    breaks = "A response has prompts*n choices; a stream covers every index."
    hook = "payload"

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload | None:
        entries = payload.get("choices")
        if not isinstance(entries, list) or not entries:
            return payload
        last = ctx.prompt_count * ctx.n - 1
        kept = [c for c in entries if not (isinstance(c, dict) and c.get("index") == last)]
        if not kept and ctx.stream:
            return None
        payload["choices"] = kept
        return payload


@register
class PromptsSwapped(Fault):
    name = "prompts-swapped"
    description = "With a list of prompts, the choices of prompt p are labelled as prompt P-1-p's."
    breaks = "Choice i answers prompts[i // n]."
    hook = "payload"

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        prompts, n = ctx.prompt_count, ctx.n
        if prompts < 2:
            return payload
        for choice in choices(payload):
            index = choice.get("index")
            if isinstance(index, int) and index < prompts * n:
                choice["index"] = (prompts - 1 - index // n) * n + index % n
        if not ctx.stream and isinstance(payload.get("choices"), list):
            payload["choices"].sort(key=lambda c: c.get("index", 0) if isinstance(c, dict) else 0)
        return payload


@register
class ChoicesUnordered(Fault):
    name = "choices-unordered"
    description = "Non-streamed choices are listed in descending index order."
    breaks = "A non-streamed response lists its choices by ascending index."
    hook = "payload"
    stream = False

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        entries = payload.get("choices")
        if isinstance(entries, list):
            payload["choices"] = entries[::-1]
        return payload


@register
class TokenFieldMissing(Fault):
    name = "token-field-missing"
    description = "FriendliAI stream chunks lack the sampled `token`."
    breaks = "FriendliAI: every token chunk carries `choices[].token`."
    hook = "payload"
    wires = FRIENDLI
    stream = True

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        for choice in choices(payload):
            choice.pop("token", None)
        return payload


@register
class ChoiceSeedMissing(Fault):
    name = "choice-seed-missing"
    description = "FriendliAI non-streamed choices lack their `seed`."
    breaks = "FriendliAI: every non-streamed choice returns the seed it was sampled with."
    hook = "payload"
    wires = FRIENDLI
    stream = False

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        for choice in choices(payload):
            choice.pop("seed", None)
        return payload


@register
class StreamTokenIdsDiffer(Fault):
    name = "stream-token-ids-differ"
    description = (
        "FriendliAI stream chunks report `token` one above the sampled id (an off-by-one); the "
        "non-streamed `tokens` are right."
    )
    breaks = "FriendliAI: the streamed token ids equal the non-streamed choice's `tokens`."
    hook = "payload"
    wires = FRIENDLI
    stream = True

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        for choice in choices(payload):
            token = choice.get("token")
            if isinstance(token, int) and not isinstance(token, bool):
                choice["token"] = token + 1
        return payload


@register
class LastTokenIdMissing(Fault):
    name = "last-token-id-missing"
    description = (
        "Each FriendliAI choice's last token rides on its finish chunk (text and reason in one "
        "chunk, as vLLM-like servers send it) without its `token` id."
    )
    breaks = "FriendliAI: the streamed token ids equal the non-streamed choice's `tokens`."
    hook = "chunks"
    wires = FRIENDLI
    stream = True

    def alter_chunks(self, chunks: Iterator[Chunk], ctx: FaultContext) -> Iterator[Chunk]:
        # The valid rendering (mockserver.variants' finish-on-last-token keeps the id), then
        # the one deviation: the id dropped from the chunk that carries the reason.
        for chunk in _LAST_TOKEN_CARRIES_FINISH.alter_chunks(chunks, StreamContext(False)):
            entries = choices(chunk)
            if len(entries) == 1 and entries[0].get("finish_reason") is not None:
                chunk = {**chunk, "choices": [
                    {key: value for key, value in entries[0].items() if key != "token"}]}
            yield chunk
