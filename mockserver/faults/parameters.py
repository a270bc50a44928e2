"""Faults that accept a parameter and then misread it (those that ignore one are in
``ignored_fields.py``).

They change the parameters handed to the engine (a ``body`` hook), never the engine itself.
Spec: the field descriptions of ``CompletionRequest`` / ``FriendliCompletionRequest`` (e.g.
``seed``: "the same seed and parameters give the same result"; ``max_tokens``: "The maximum
number of tokens to generate"); bug classes 18-20, 22, 26 and 33 of the research notes.
"""

from __future__ import annotations

from typing import TypeGuard

from spec import JSON

from ..wire.requests import default_max_tokens
from .base import OPENAI, Fault, FaultContext
from .registry import register

Body = dict[str, JSON]
SEED_SPACE = 2**63


def _is_int(value: JSON) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


class _BodyFault(Fault):
    hook = "body"


@register
class SeedIgnored(_BodyFault):
    name = "seed-ignored"
    description = "The seed is replaced by a fresh random one, so seeded runs do not repeat."
    breaks = "The same seed and parameters give the same output."

    def alter_body(self, body: Body, ctx: FaultContext) -> Body:
        seed = body.get("seed")
        if _is_int(seed):
            body["seed"] = ctx.rng.randrange(SEED_SPACE)
        elif isinstance(seed, list):
            body["seed"] = [ctx.rng.randrange(SEED_SPACE) for _ in seed]
        return body


@register
class MaxTokensOverrun(_BodyFault):
    name = "max-tokens-overrun"
    description = "One token more than max_tokens (or max_total_tokens) is generated."
    breaks = "completion_tokens <= max_tokens."

    def alter_body(self, body: Body, ctx: FaultContext) -> Body:
        limit = body.get("max_tokens")
        default = default_max_tokens(ctx.wire)
        if _is_int(limit):
            body["max_tokens"] = limit + 1
        elif default is not None:
            body["max_tokens"] = default + 1
        elif _is_int(body.get("max_total_tokens")):
            body["max_total_tokens"] = body["max_total_tokens"] + 1
        return body


@register
class EchoIgnored(_BodyFault):
    name = "echo-ignored"
    description = "`echo: true` is accepted and ignored: the prompt is not prepended."
    breaks = "With echo, each choice's text starts with its prompt."
    wires = OPENAI

    def alter_body(self, body: Body, ctx: FaultContext) -> Body:
        body["echo"] = False
        return body


@register
class NIdentical(_BodyFault):
    name = "n-identical"
    description = (
        "All n choices of a prompt share one seed (the request's, or one the server picks): "
        "identical even at temperature > 0. A FriendliAI seed list is still honoured."
    )
    breaks = "n > 1 at temperature > 0 gives independent samples (not all the same)."

    def alter_body(self, body: Body, ctx: FaultContext) -> Body:
        seed = body.get("seed")
        if ctx.n < 2 or isinstance(seed, list):
            return body  # a seed list names each choice's seed: no seeds are derived
        return _one_seed_for_all(body, seed if _is_int(seed) else ctx.rng.randrange(SEED_SPACE),
                                 ctx.n)


def _one_seed_for_all(body: Body, seed: int, n: int) -> Body:
    """Every one of the ``n`` choices sampled with ``seed``: n copies of one sample."""
    body["seed"] = [seed] * n
    body.pop("best_of", None)  # one seed per returned choice: candidates == n
    return body


@register
class SeededNIdentical(_BodyFault):
    name = "seeded-n-identical"
    description = (
        "With an integer seed, every one of the n choices is sampled with that same seed, so "
        "they are identical even at temperature > 0 (unseeded requests are left alone)."
    )
    breaks = "n > 1 at temperature > 0 gives independent samples, seeded or not."

    def alter_body(self, body: Body, ctx: FaultContext) -> Body:
        seed = body.get("seed")
        if ctx.n < 2 or not _is_int(seed):
            return body
        return _one_seed_for_all(body, seed, ctx.n)


@register
class LogprobsZeroOff(_BodyFault):
    name = "logprobs-zero-off"
    description = "`logprobs: 0` is treated as off: logprobs come back null."
    breaks = "logprobs 0 returns the logprobs object (with the sampled token's logprob)."

    def alter_body(self, body: Body, ctx: FaultContext) -> Body:
        if body.get("logprobs") == 0:
            body["logprobs"] = None
        return body


@register
class StreamDiffers(_BodyFault):
    name = "stream-differs"
    description = (
        "Streams sample with other parameters than non-streamed requests (another seed; "
        "temperature 1 instead of 0), so the streamed text differs."
    )
    breaks = "The concatenated stream text equals the non-streamed text of the same request."
    stream = True

    def alter_body(self, body: Body, ctx: FaultContext) -> Body:
        if body.get("temperature") == 0:
            body["temperature"] = 1.0
        seed = body.get("seed")
        if isinstance(seed, list):
            body["seed"] = [(s + 1_000_003) % SEED_SPACE if _is_int(s) else s for s in seed]
        else:
            base = seed if _is_int(seed) else ctx.rng.randrange(SEED_SPACE)
            body["seed"] = (base + 1_000_003) % SEED_SPACE
        return body
