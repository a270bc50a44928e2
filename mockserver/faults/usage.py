"""Faults in token usage: when it is sent, and whether its numbers are right.

Spec: ``Usage`` ("Tokens in the prompts, counted once per prompt (not multiplied by ``n``)";
"total_tokens: prompt_tokens + completion_tokens") and ``StreamOptions.include_usage`` ("one
extra chunk is streamed before ``data: [DONE]``: its ``choices`` is an empty array ... Every
other chunk then carries ``usage: null`` (OpenAI)"); bug classes 5-10 of the research notes.
"""

from __future__ import annotations

from spec import JSON

from .base import OPENAI, Fault, FaultContext
from .registry import register
from .shapes import is_usage_chunk, usage

Payload = dict[str, JSON]


def _shift(payload: Payload, *, prompt: int = 0, completion: int = 0, total: int = 0) -> None:
    counts = usage(payload)
    if counts is None:
        return
    for key, delta in (("prompt_tokens", prompt), ("completion_tokens", completion)):
        counts[key] = max(0, int(counts[key]) + delta)
    counts["total_tokens"] = int(counts["prompt_tokens"]) + int(counts["completion_tokens"]) + total


@register
class UsageUnrequested(Fault):
    name = "usage-unrequested"
    description = "Streams always end with a usage chunk, even without include_usage."
    breaks = "Without `stream_options.include_usage: true`, no chunk carries a usage object."
    hook = "body"
    stream = True

    def alter_body(self, body: Payload, ctx: FaultContext) -> Payload:
        body["stream_options"] = {"include_usage": True}
        return body


@register
class UsageMissing(Fault):
    name = "usage-missing"
    description = "No usage: the non-streamed body lacks it and the usage chunk is not sent."
    breaks = "Non-streamed responses carry usage; with include_usage a stream has a usage chunk."
    hook = "payload"

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload | None:
        if is_usage_chunk(payload):
            return None
        if not ctx.stream:
            payload.pop("usage", None)
        return payload


@register
class UsageTotalWrong(Fault):
    name = "usage-total-wrong"
    description = "total_tokens is one more than prompt_tokens + completion_tokens."
    breaks = "usage.total_tokens == usage.prompt_tokens + usage.completion_tokens."
    hook = "payload"

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        _shift(payload, total=1)
        return payload


@register
class UsagePromptTimesN(Fault):
    name = "usage-prompt-times-n"
    description = "prompt_tokens is multiplied by n (total adjusted to match)."
    breaks = "prompt_tokens counts each prompt once, whatever n is."
    hook = "payload"

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        counts = usage(payload)
        if counts is not None:
            _shift(payload, prompt=int(counts["prompt_tokens"]) * (ctx.n - 1))
        return payload


@register
class UsageChoicesNotEmpty(Fault):
    name = "usage-choices-not-empty"
    description = "The usage chunk's `choices` holds an empty-text choice instead of being []."
    breaks = "The usage chunk has `choices: []`."
    hook = "payload"
    stream = True

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        if is_usage_chunk(payload):
            payload["choices"] = [
                {"index": 0, "text": "", "logprobs": None, "finish_reason": None}
            ]
        return payload


@register
class UsageCompletionOffByOne(Fault):
    name = "usage-completion-off-by-one"
    description = "completion_tokens is one less than generated (total still adds up)."
    breaks = "completion_tokens counts every generated token (== max_tokens when length-cut)."
    hook = "payload"

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        _shift(payload, completion=-1)
        return payload


@register
class UsageStreamDiffers(Fault):
    name = "usage-stream-differs"
    description = "The streamed usage counts one completion token more than the non-streamed."
    breaks = "A stream's usage equals the non-streamed usage of the same request."
    hook = "payload"
    stream = True

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        if is_usage_chunk(payload):
            _shift(payload, completion=1)
        return payload


@register
class UsageKeyMissingOnChunks(Fault):
    name = "usage-key-missing-on-chunks"
    description = "With include_usage, the chunks before the usage chunk lack the `usage` key."
    breaks = "OpenAI: with include_usage, every chunk but the usage chunk carries usage: null."
    hook = "payload"
    wires = OPENAI  # FriendliAI chunks never carry the key
    stream = True

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        if "usage" in payload and payload["usage"] is None:
            del payload["usage"]
        return payload


@register
class CompletionTokensLeftOut(Fault):
    name = "completion-tokens-left-out"
    description = ("usage has no completion_tokens where tokens were generated (OpenAI leaves "
                   "it out only of an answer with none).")
    breaks = "usage.completion_tokens is reported whenever tokens were generated."
    hook = "payload"

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        counts = usage(payload)
        if counts is not None and counts.get("completion_tokens"):
            del counts["completion_tokens"]
        return payload
