"""Faults in the generated text itself: stop strings or the prompt leaking, characters split
into U+FFFD.

Spec: ``CompletionRequest.stop`` ("the returned text never contains them"), ``ChunkChoice``
("``text`` holds only the new text") and the streaming contract that joined chunk texts equal
the non-streamed text; bug classes 14, 15, 21 and 22 of the research notes.
"""

from __future__ import annotations

from collections.abc import Iterator

from spec import JSON

from .base import OPENAI, Fault, FaultContext
from .registry import register
from .shapes import choices

Payload = dict[str, JSON]
REPLACEMENT = "\ufffd"


def _leak_stop(payload: Payload, ctx: FaultContext) -> Payload:
    """Append the first stop string to every choice that ended with finish_reason `stop`.

    The rendered output does not say whether a stop string or the end-of-text token ended a
    choice, so an end-of-text stop leaks the stop string too (it is a fault either way).
    """
    stops = ctx.stops
    if stops:
        for choice in choices(payload):
            if choice.get("finish_reason") == "stop" and isinstance(choice.get("text"), str):
                choice["text"] += stops[0]
    return payload


@register
class StopLeak(Fault):
    name = "stop-leak"
    description = (
        "The matched stop string is left in the text (streamed and non-streamed); a choice "
        "that ended at end-of-text while stop strings were set gets the first one too."
    )
    breaks = "The returned text never contains a stop string."
    hook = "payload"

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        return _leak_stop(payload, ctx)


@register
class StopLeakStream(Fault):
    name = "stop-leak-stream"
    description = (
        "Streams let the stop string's text through (also after an end-of-text stop, as "
        "`stop-leak`); non-streamed text is correct."
    )
    breaks = "Streamed text never contains a stop string (and equals the non-streamed text)."
    hook = "payload"
    stream = True

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        return _leak_stop(payload, ctx)


def _is_token_prompt(prompt: JSON) -> bool:
    return isinstance(prompt, list) and bool(prompt) and not isinstance(prompt[0], str)


@register
class PromptLeakStream(Fault):
    name = "prompt-leak-stream"
    description = (
        "A streamed token-id prompt's text leaks into the stream, ahead of the completion (as "
        "if `echo` were on); non-streamed text is correct."
    )
    breaks = "With a token-id prompt and echo off, the joined stream text is the completion only."
    hook = "body"
    wires = OPENAI  # FriendliAI's token prompts are `tokens`, and it has no echo
    stream = True

    def alter_body(self, body: dict[str, JSON], ctx: FaultContext) -> dict[str, JSON]:
        if _is_token_prompt(body.get("prompt")) and body.get("echo") is not True:
            body["echo"] = True
        return body


@register
class Utf8SplitReplacement(Fault):
    name = "utf8-split-replacement"
    description = (
        "A multi-byte character whose bytes span several tokens reaches the stream as U+FFFD "
        "(each token decoded on its own)."
    )
    breaks = "No U+FFFD in streamed text that the non-streamed text does not have."
    hook = "chunks"
    stream = True

    def alter_chunks(self, chunks: Iterator[Payload], ctx: FaultContext) -> Iterator[Payload]:
        held: set[int] = set()  # indices whose previous chunk had no text (bytes held back)
        for chunk in chunks:
            for choice in choices(chunk):
                index, text = choice.get("index"), choice.get("text")
                if not isinstance(index, int) or not isinstance(text, str):
                    continue
                if text == "" and choice.get("finish_reason") is None:
                    held.add(index)
                    continue
                if index in held and text and ord(text[0]) > 0x7F:
                    choice["text"] = REPLACEMENT + text[1:]
                held.discard(index)
            yield chunk
