"""Faults in the ``logprobs`` object: its shape, its numbers, and whether it is there at all.

Spec: ``LogprobsObject`` ("The four arrays have one entry per token ... ``text_offset`` counts
characters from the start of the prompt"; the first echoed entry is null), ``Logprobs``
("Include the log probabilities of the ``logprobs`` most likely tokens at each position, and of
the chosen token; so up to ``logprobs + 1`` entries per position. 0 still returns the logprobs
object") and ``CompletionRequest.echo`` ("With ``logprobs``, the prompt tokens get log
probabilities too"); bug classes 23 and 26-29 of the research notes.
"""

from __future__ import annotations

from collections.abc import Iterator

from spec import JSON

from .base import OPENAI, Fault, FaultContext
from .registry import register
from .shapes import choices, logprobs_objects

Payload = dict[str, JSON]
ARRAYS = ("tokens", "token_logprobs", "top_logprobs", "text_offset")


class _LogprobsFault(Fault):
    hook = "payload"


@register
class LogprobsOffsetsMisaligned(_LogprobsFault):
    name = "logprobs-offsets-misaligned"
    description = "Every text_offset is one character too far."
    breaks = "text_offset[i] == len(prompt) + len(''.join(tokens[:i])) (0 first under echo)."

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        for logprobs in logprobs_objects(payload):
            logprobs["text_offset"] = [o + 1 for o in logprobs.get("text_offset", [])]
        return payload


@register
class LogprobsOffsetsFromCompletion(_LogprobsFault):
    name = "logprobs-offsets-from-completion"
    description = (
        "text_offset counts from the completion's start, not the prompt's (as vLLM does): "
        "wrong for OpenAI, allowed by the openai-compatible profile."
    )
    breaks = "text_offset[i] == len(prompt) + len(''.join(tokens[:i]))."

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        if ctx.value_of("echo") is True:
            return payload
        for logprobs, prompt in _logprobs_with_prompts(payload, ctx):
            if not isinstance(prompt, str):
                continue
            logprobs["text_offset"] = [o - len(prompt) if isinstance(o, int) else o
                                       for o in logprobs.get("text_offset", [])]
        return payload


@register
class LogprobsTokensMismatch(_LogprobsFault):
    name = "logprobs-tokens-mismatch"
    description = "Tokens are shown in the tokenizer's raw form (spaces as Ġ), not as text."
    breaks = "''.join(logprobs.tokens) == text."

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        for logprobs in logprobs_objects(payload):
            tokens = [t.replace(" ", "\u0120") for t in logprobs.get("tokens", [])]
            if tokens and tokens == logprobs.get("tokens"):
                tokens[-1] += "\u0120"
            logprobs["tokens"] = tokens
        return payload


@register
class LogprobsTooManyTop(_LogprobsFault):
    name = "logprobs-too-many-top"
    description = "top_logprobs entries hold logprobs + 2 alternatives."
    breaks = "Each top_logprobs entry has at most logprobs + 1 items."

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        want = (ctx.logprobs or 0) + 2
        for logprobs in logprobs_objects(payload):
            for top in logprobs.get("top_logprobs", []):
                if not isinstance(top, dict):
                    continue
                floor = min(top.values(), default=0.0)
                extra = 0
                while len(top) < want:
                    extra += 1
                    top[f"<extra-{extra}>"] = floor - extra
        return payload


@register
class LogprobsTooFewTop(_LogprobsFault):
    name = "logprobs-too-few-top"
    description = "top_logprobs entries hold only the chosen token when logprobs asks for more."
    breaks = "Each top_logprobs entry has at least logprobs items."

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        if (ctx.logprobs or 0) < 2:
            return payload
        for logprobs in logprobs_objects(payload):
            tokens = logprobs.get("tokens", [])
            tops = logprobs.get("top_logprobs", [])
            if not isinstance(tokens, list) or not isinstance(tops, list):
                continue
            for i, (token, top) in enumerate(zip(tokens, tops, strict=False)):
                if isinstance(top, dict) and token in top:
                    tops[i] = {token: top[token]}
        return payload


@register
class LogprobsPositive(_LogprobsFault):
    name = "logprobs-positive"
    description = "Log probabilities are reported as positive numbers (|logprob| + 0.5)."
    breaks = "Every logprob is <= 0."

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        for logprobs in logprobs_objects(payload):
            logprobs["token_logprobs"] = [
                None if v is None else abs(v) + 0.5 for v in logprobs.get("token_logprobs", [])
            ]
            for top in logprobs.get("top_logprobs", []):
                if isinstance(top, dict):
                    for key, value in top.items():
                        top[key] = abs(value) + 0.5
        return payload


@register
class LogprobsMissing(_LogprobsFault):
    name = "logprobs-missing"
    description = "`logprobs` is null although the request asked for them."
    breaks = "With `logprobs` set, every choice (and chunk) carries a logprobs object."

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        for choice in choices(payload):
            if "logprobs" in choice:
                choice["logprobs"] = None
        return payload


@register
class EchoLogprobsFirstNotNull(_LogprobsFault):
    name = "echo-logprobs-first-not-null"
    description = "Under echo, the first prompt token gets logprob 0.0 instead of null."
    breaks = "With echo and logprobs, token_logprobs[0] and top_logprobs[0] are null."
    wires = OPENAI  # FriendliAI has no echo

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        for logprobs in logprobs_objects(payload):
            values, tops = logprobs.get("token_logprobs", []), logprobs.get("top_logprobs", [])
            tokens = logprobs.get("tokens", [])
            for i, value in enumerate(values):
                if value is None:
                    values[i] = 0.0
                    if i < len(tops) and tops[i] is None and i < len(tokens):
                        tops[i] = {tokens[i]: 0.0}
        return payload


@register
class LogprobsArraysUnequal(_LogprobsFault):
    name = "logprobs-arrays-unequal"
    description = "text_offset is one entry shorter than the other logprobs arrays."
    breaks = "tokens, token_logprobs, top_logprobs and text_offset have equal lengths."

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        for logprobs in logprobs_objects(payload):
            offsets = logprobs.get("text_offset")
            if isinstance(offsets, list) and offsets:
                offsets.pop()
        return payload


@register
class LogprobsTopMissingChosen(_LogprobsFault):
    name = "logprobs-top-missing-chosen"
    description = (
        "top_logprobs holds only the `logprobs` most likely tokens: the sampled token is left "
        "out when it is not among them (always with logprobs 0)."
    )
    breaks = "Each top_logprobs entry holds the sampled token, with its token_logprobs value."

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        want = ctx.logprobs or 0
        for logprobs in logprobs_objects(payload):
            tokens, tops = logprobs.get("tokens", []), logprobs.get("top_logprobs", [])
            for token, top in zip(tokens, tops, strict=False):
                if isinstance(top, dict) and len(top) > want and token in top:
                    del top[token]
        return payload


@register
class EchoBosCounted(_LogprobsFault):
    name = "echo-bos-counted"
    description = (
        "Under echo, the logprobs start with a `<s>` token the text leaves out, and every "
        "text_offset counts its 3 characters (as vLLM does); non-streamed answers only."
    )
    breaks = ("The tokens spell the text, and text_offset[i] is the token's place in it "
              "(0 first under echo).")
    wires = OPENAI  # FriendliAI has no echo
    BOS = "<s>"

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        if ctx.value_of("echo") is not True or ctx.stream:
            return payload
        for logprobs in logprobs_objects(payload):
            offsets = logprobs.get("text_offset")
            if not isinstance(offsets, list) or not offsets:
                continue
            logprobs["text_offset"] = [0] + [o + len(self.BOS) if isinstance(o, int) else o
                                             for o in offsets]
            logprobs["tokens"] = [self.BOS, *logprobs.get("tokens", [])]
            logprobs["token_logprobs"] = [None, *logprobs.get("token_logprobs", [])]
            logprobs["top_logprobs"] = [None, *logprobs.get("top_logprobs", [])]
        return payload


def _prompts(prompt: JSON) -> list[JSON]:
    """The request's prompts, one per item (a list of token ids is one prompt)."""
    if isinstance(prompt, list) and prompt and not isinstance(prompt[0], int):
        return list(prompt)
    return [prompt]


def _logprobs_with_prompts(
    payload: Payload, ctx: FaultContext
) -> Iterator[tuple[dict[str, JSON], JSON]]:
    """Each choice's logprobs object with the prompt the choice continues."""
    prompts = _prompts(ctx.value_of("prompt"))
    for choice in choices(payload):
        logprobs, index = choice.get("logprobs"), choice.get("index")
        if isinstance(logprobs, dict) and isinstance(index, int):
            yield logprobs, prompts[min(index // ctx.n, len(prompts) - 1)]


def _prompt_entries(prompt: JSON, offsets: list[JSON]) -> int:
    """How many leading logprobs entries belong to an echoed ``prompt``."""
    if isinstance(prompt, list):
        return len(prompt)  # one entry per prompt token id
    if isinstance(prompt, str):
        return sum(1 for o in offsets if isinstance(o, int) and o < len(prompt))
    return 0


@register
class EchoPromptLogprobsMissing(_LogprobsFault):
    name = "echo-prompt-logprobs-missing"
    description = (
        "Under echo, non-streamed logprobs cover only the completion: the echoed prompt tokens "
        "get no entries."
    )
    breaks = "With echo and logprobs, the arrays start with one entry per prompt token."
    wires = OPENAI  # FriendliAI has no echo
    stream = False

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        if ctx.value_of("echo") is not True:
            return payload
        for logprobs, prompt in _logprobs_with_prompts(payload, ctx):
            offsets = logprobs.get("text_offset")
            skip = _prompt_entries(prompt, offsets if isinstance(offsets, list) else [])
            for name in ARRAYS:
                values = logprobs.get(name)
                if isinstance(values, list):
                    logprobs[name] = values[skip:]
        return payload
