"""Variants of the stream's chunks: the same tokens, cut or decorated as other servers do.

Spec: ``CompletionChunk`` in ``spec/completions.yaml``: one chunk carries the new text of one
choice; the finish chunk carries the reason. Where each chunk ends is the server's choice:
vLLM sends the reason on the last token's chunk (its completion tests assert at most
``max_tokens`` chunks per choice, none with empty text), and holds a partial UTF-8 character
back in a chunk with empty text, and sends an echoed prompt with the first generated text (its
stream generator prepends the prompt to the first delta). Every variant here keeps each
choice's text, logprobs and usage totals exactly as the default rendering has them.
"""

from __future__ import annotations

from collections.abc import Iterator

from spec import JSON

from .base import StreamContext, Variant
from .registry import register

Chunk = dict[str, JSON]


def _choice(chunk: Chunk) -> dict[str, JSON] | None:
    """The one choice of a choice chunk; None for the usage chunk (``choices: []``)."""
    choices = chunk.get("choices")
    if isinstance(choices, list) and len(choices) == 1 and isinstance(choices[0], dict):
        return choices[0]
    return None


def _text(chunk: Chunk) -> JSON:
    choice = _choice(chunk)
    return None if choice is None else choice.get("text")


def _joined_logprobs(first: JSON, second: JSON) -> JSON:
    """Two chunks' logprobs objects as one: each array of ``first`` then of ``second``."""
    if not isinstance(first, dict) or not isinstance(second, dict):
        return second if first is None else first
    joined: dict[str, JSON] = {}
    for key, value in first.items():
        other = second.get(key)
        joined[key] = (value + other if isinstance(value, list) and isinstance(other, list)
                       else value)
    return joined


def _merged(earlier: Chunk, later: Chunk) -> Chunk:
    """``later`` with ``earlier``'s text and logprobs in front of its own (one choice)."""
    before, after = _choice(earlier) or {}, _choice(later) or {}
    choice: dict[str, JSON] = {}
    for key, value in after.items():
        if key == "text" and isinstance(value, str) and isinstance(before.get("text"), str):
            value = f"{before['text']}{value}"
        elif key == "logprobs":
            value = _joined_logprobs(before.get("logprobs"), value)
        choice[key] = value
        if key == "text" and "token" in before and "token" not in after:
            choice["token"] = before["token"]  # FriendliAI's last token id is kept, in place
    return {**later, "choices": [choice]}


@register
class FinishOnLastToken(Variant):
    name = "finish-on-last-token"
    imitates = "vLLM (the finish_reason rides on the last token's chunk)"
    description = ("no separate finish chunk: each choice's reason (and any held-back text) "
                   "goes on its last token's chunk, an echoed prompt goes with the first "
                   "token's, and no chunk has empty text")

    def alter_chunks(self, chunks: Iterator[Chunk], ctx: StreamContext) -> Iterator[Chunk]:
        pending: dict[JSON, Chunk] = {}
        echoes: set[JSON] = set()  # choices whose pending chunk is their echo, for the next one
        seen: set[JSON] = set()
        for chunk in chunks:
            choice = _choice(chunk)
            if choice is None:  # the usage chunk comes after every finish
                yield from pending.values()
                pending.clear()
                yield chunk
                continue
            index = choice.get("index")
            if ctx.echo and index not in seen:
                echoes.add(index)
            seen.add(index)
            held = pending.pop(index, None)
            if held is not None:
                if ("" in (_text(held), _text(chunk)) or index in echoes
                        or choice.get("finish_reason") is not None):
                    chunk = _merged(held, chunk)  # empty, the echo, or the last comes
                    echoes.discard(index)
                else:
                    yield held
            if choice.get("finish_reason") is not None:
                yield chunk
            else:
                pending[index] = chunk
        yield from pending.values()


@register
class FinishRepeatedOnLength(FinishOnLastToken):
    name = "finish-repeated-on-length"
    imitates = ("OpenAI (a stream cut by max_tokens says length on its last token's chunk "
                "and again on one more chunk with empty text)")
    description = ("as finish-on-last-token, and each choice that ends with length gets one "
                   "more chunk repeating the reason, with empty text (and logprobs with "
                   "empty arrays when asked for)")

    # Recorded: gpt-3.5-turbo-instruct, 2023-10-04, logprobs 5, the last two events
    # https://github.com/LangStream/langstream/blob/72ea2add84cf063e5dec28b68544d41b0e131919/langstream-runtime/langstream-runtime-impl/src/test/java/ai/langstream/kafka/TextCompletionsIT.java

    def alter_chunks(self, chunks: Iterator[Chunk], ctx: StreamContext) -> Iterator[Chunk]:
        for chunk in super().alter_chunks(chunks, ctx):
            yield chunk
            choice = _choice(chunk)
            if choice is not None and choice.get("finish_reason") == "length":
                yield {**chunk, "choices": [_emptied(choice)]}


@register
class EmptyTextChunks(Variant):
    name = "empty-text-chunks"
    imitates = "vLLM (a token that ends inside a UTF-8 character yields a chunk with empty text)"
    description = ("before the first token of each choice and before each token with a "
                   "non-ASCII character, a chunk with empty text and no tokens")

    def alter_chunks(self, chunks: Iterator[Chunk], ctx: StreamContext) -> Iterator[Chunk]:
        seen: set[JSON] = set()
        for chunk in chunks:
            choice = _choice(chunk)
            if choice is not None and choice.get("finish_reason") is None:
                text, index = choice.get("text"), choice.get("index")
                if isinstance(text, str) and (index not in seen or not text.isascii()):
                    seen.add(index)
                    yield {**chunk, "choices": [_emptied(choice)]}
            yield chunk


def _emptied(choice: dict[str, JSON]) -> dict[str, JSON]:
    """``choice`` with no text, no token, and logprobs (if any) with empty arrays."""
    empty = {key: value for key, value in choice.items() if key != "token"}
    empty["text"] = ""
    logprobs = choice.get("logprobs")
    if isinstance(logprobs, dict):
        empty["logprobs"] = {key: [] if isinstance(value, list) else value
                             for key, value in logprobs.items()}
    return empty


@register
class SplitUtf8Held(EmptyTextChunks):
    name = "split-utf8-held"
    imitates = "vLLM's detokenizer holding a partial UTF-8 character (same as empty-text-chunks)"
    description = "an alias of empty-text-chunks"


@register
class NullUsageAbsent(Variant):
    name = "null-usage-absent"
    imitates = "servers that leave `usage` out of every chunk but the usage chunk"
    description = ("with include_usage, no `usage: null` key on the chunks before the usage "
                   "chunk (the openai-compatible and friendli profiles allow it; the strict "
                   "openai profile, after OpenAI's text, does not)")

    def alter_chunks(self, chunks: Iterator[Chunk], ctx: StreamContext) -> Iterator[Chunk]:
        for chunk in chunks:
            if "usage" in chunk and chunk["usage"] is None:
                chunk = {key: value for key, value in chunk.items() if key != "usage"}
            yield chunk


@register
class UsageEveryChunk(Variant):
    name = "usage-every-chunk"
    imitates = "vLLM with `stream_options.continuous_usage_stats` (usage so far on every chunk)"
    description = ("with include_usage, every chunk carries the usage so far (the stream is "
                   "held until its usage chunk, which has the totals)")

    def alter_chunks(self, chunks: Iterator[Chunk], ctx: StreamContext) -> Iterator[Chunk]:
        if not ctx.include_usage:
            yield from chunks
            return
        held = list(chunks)
        totals = next((chunk["usage"] for chunk in reversed(held)
                       if isinstance(chunk.get("usage"), dict)), None)
        if not isinstance(totals, dict):
            yield from held
            return
        prompt, completion = totals.get("prompt_tokens"), 0
        for chunk in held:
            choice = _choice(chunk)
            if choice is not None:
                logprobs = choice.get("logprobs")
                tokens = logprobs.get("tokens") if isinstance(logprobs, dict) else None
                text = choice.get("text")
                completion += (len(tokens) if isinstance(tokens, list)
                               else 1 if choice.get("finish_reason") is None and text else 0)
                if isinstance(prompt, int):
                    completion = min(completion, _int(totals.get("completion_tokens")))
                    chunk = {**chunk, "usage": {"prompt_tokens": prompt,
                                                "completion_tokens": completion,
                                                "total_tokens": prompt + completion}}
            yield chunk


def _int(value: JSON) -> int:
    return value if isinstance(value, int) else 0
