"""FriendliAI's Hugging Face-style samplers: each has the effect its definition states.

Spec: ``FriendliCompletionRequest`` in ``spec/completions.yaml`` and FriendliAI's dedicated
completions API: ``min_tokens`` ("The minimum number of tokens to generate", Hugging Face's
``min_new_tokens``), ``min_total_tokens`` and ``max_total_tokens`` ("including both the
generated result and the input tokens", ``min_length`` / ``max_length``), ``no_repeat_ngram``
("every ngram of that size can only occur once among the generated result (plus the input
tokens for decoder-only models)"), ``repetition_penalty`` ("Penalizes tokens that have already
appeared in the generated result (plus the input tokens)") and ``min_p`` ("Tokens with
probabilities below this scaled threshold are excluded from sampling").

The first four follow from the definition for any model: MUST. The last two compare greedy
answers: a penalty of 10 on a repeated token, or min_p 1 keeping only the most likely token,
changes greedy output as the definition says on any real model, but no text promises a
particular margin, so they are SHOULD.
"""

from __future__ import annotations

from conformance.model import NotApplicable, Violation
from conformance.probes.samplers_huggingface import BASELINES, MAX_TOKENS, MIN_TOKENS, NGRAM
from conformance.run.check_context import CheckContext
from conformance.views import compact
from spec import JSON

from .base import API, FRIENDLI_WIRE, MUST, SCHEMAS, SHOULD, rule
from .common import choice_of, usage_of
from .shared_checks import min_tokens_held, requested_integer, sampled_is_greedy

REQUEST = f"{SCHEMAS}/FriendliCompletionRequest/properties"
FRIENDLI_API = "FriendliAI dedicated completions API"


def _tokens(ctx: CheckContext, probe: str, key: str) -> list[JSON]:
    tokens = choice_of(ctx, probe, key).get("tokens")
    if not isinstance(tokens, list):
        raise NotApplicable(f"{probe}/{key}: the choice has no tokens (judged by SCHEMA-001)")
    return tokens


@rule(
    "FRIENDLI-010", MUST, "min_tokens holds off the end",
    requirement=f"With min_tokens {MIN_TOKENS} (and max_tokens {MAX_TOKENS}, no stop), at least "
    f"{MIN_TOKENS} tokens are generated, where the greedy answer alone ends sooner.",
    citation=f"{REQUEST}/min_tokens; {FRIENDLI_API}, min_tokens (\"The minimum number of "
    "tokens to generate\")",
    source=API, probes=("min-tokens",), traits=FRIENDLI_WIRE, features=("min_tokens",),
    faults=("min-tokens-ignored",),
)
def min_tokens_honoured(ctx: CheckContext) -> None:
    min_tokens_held(ctx)


@rule(
    "FRIENDLI-011", MUST, "min_total_tokens holds off the end",
    requirement="With min_total_tokens at the prompt's tokens plus "
    f"{MIN_TOKENS}, prompt_tokens + completion_tokens reach it.",
    citation=f"{REQUEST}/min_total_tokens; {FRIENDLI_API}, min_total_tokens (\"The minimum "
    "number of tokens including both the generated result and the input tokens\")",
    source=API, probes=("min-total-tokens",), traits=FRIENDLI_WIRE,
    features=("min_total_tokens",), faults=("min-tokens-ignored",),
)
def min_total_tokens_honoured(ctx: CheckContext) -> None:
    prompt, completion, _ = usage_of(ctx, "min-total-tokens", "min")
    least = requested_integer(ctx, "min-total-tokens", "min", "min_total_tokens")
    if prompt + completion < least:
        raise Violation(
            f"prompt plus completion is {prompt + completion} tokens under min_total_tokens "
            f"{least}", expected=f">= {least}", actual=prompt + completion,
            path="usage.prompt_tokens + usage.completion_tokens",
            exchange="min-total-tokens/min",
            evidence=compact(ctx.response("min-total-tokens", "min").get("usage")),
        )


@rule(
    "FRIENDLI-012", MUST, "max_total_tokens bounds prompt plus completion",
    requirement="With max_total_tokens (and no max_tokens), prompt_tokens + completion_tokens "
    "do not exceed it.",
    citation=f"{REQUEST}/max_total_tokens; {FRIENDLI_API}, max_total_tokens (\"The maximum "
    "number of tokens including both the generated result and the input tokens\")",
    source=API, probes=("max-total-tokens",), traits=FRIENDLI_WIRE,
    features=("max_total_tokens",), faults=("max-tokens-overrun",),
)
def max_total_tokens_honoured(ctx: CheckContext) -> None:
    prompt, completion, _ = usage_of(ctx, "max-total-tokens", "max")
    most = requested_integer(ctx, "max-total-tokens", "max", "max_total_tokens")
    if prompt + completion > most:
        raise Violation(
            f"prompt plus completion is {prompt + completion} tokens over max_total_tokens "
            f"{most}", expected=f"<= {most}", actual=prompt + completion,
            path="usage.prompt_tokens + usage.completion_tokens",
            exchange="max-total-tokens/max",
            evidence=compact(ctx.response("max-total-tokens", "max").get("usage")),
        )


def repeated_ngram(tokens: list[JSON], size: int) -> tuple[int, int] | None:
    """The positions of the first n-gram of ``size`` tokens that occurs twice, else None."""
    seen: dict[tuple[JSON, ...], int] = {}
    for start in range(len(tokens) - size + 1):
        gram = tuple(tokens[start:start + size])
        if gram in seen:
            return seen[gram], start
        seen[gram] = start
    return None


@rule(
    "FRIENDLI-013", MUST, "no_repeat_ngram leaves no n-gram twice",
    requirement=f"With no_repeat_ngram {NGRAM}, no {NGRAM} consecutive generated token ids "
    "occur twice in the choice's tokens.",
    citation=f"{REQUEST}/no_repeat_ngram; {FRIENDLI_API}, no_repeat_ngram (\"every ngram of "
    "that size can only occur once among the generated result\")",
    source=API, probes=("no-repeat-ngram",), traits=FRIENDLI_WIRE,
    features=("no_repeat_ngram", "choice_tokens"), faults=("no-repeat-ngram-ignored",),
    fuzz="no-repeat-ngram",
)
def no_repeat_ngram_honoured(ctx: CheckContext) -> None:
    tokens = _tokens(ctx, "no-repeat-ngram", "banned")
    size = requested_integer(ctx, "no-repeat-ngram", "banned", "no_repeat_ngram")
    found = repeated_ngram(tokens, size)
    if found is not None:
        first, again = found
        raise Violation(
            f"the {size}-gram {tokens[first:first + size]} occurs at positions {first} and "
            f"{again}", expected=f"no {size}-gram twice", actual=tokens[again:again + size],
            path=f"choices[0].tokens[{again}]", exchange="no-repeat-ngram/banned",
            evidence=compact(tokens),
        )


def first_repeat(tokens: list[JSON]) -> int | None:
    """The position of the first token that occurred earlier in ``tokens``, else None."""
    for position, token in enumerate(tokens):
        if token in tokens[:position]:
            return position
    return None


@rule(
    "FRIENDLI-014", SHOULD, "repetition_penalty turns greedy away from a repeat",
    requirement="Where the greedy answer first repeats one of its tokens, the same request with "
    "repetition_penalty 10 has turned away from it (differs at or before that token).",
    citation=f"{REQUEST}/repetition_penalty; {FRIENDLI_API}, repetition_penalty (\"Penalizes "
    "tokens that have already appeared in the generated result\")",
    source=API, probes=(BASELINES, "repetition-penalty"), traits=FRIENDLI_WIRE,
    features=("repetition_penalty", "choice_tokens"), faults=("repetition-penalty-ignored",),
)
def repetition_penalty_honoured(ctx: CheckContext) -> None:
    base = _tokens(ctx, BASELINES, "looping")
    position = first_repeat(base)
    if position is None:
        raise NotApplicable("the greedy baseline repeats none of its tokens: nothing to penalize")
    penalized = _tokens(ctx, "repetition-penalty", "penalized")
    if penalized[:position + 1] == base[:position + 1]:
        raise Violation(
            f"the penalized greedy answer still repeats token {base[position]} at position "
            f"{position}, as the unpenalized one does",
            expected=f"other tokens than {base[:position + 1]}",
            actual=penalized[:position + 1], path=f"choices[0].tokens[{position}]",
            exchange="repetition-penalty/penalized", evidence=compact(penalized),
        )


@rule(
    "FRIENDLI-015", SHOULD, "min_p 1 keeps only the most likely token",
    requirement="At temperature 1 with min_p 1 only the most likely token may be drawn: the "
    "seeded answer equals the greedy one.",
    citation=f"{REQUEST}/min_p; {FRIENDLI_API}, min_p (\"Tokens with probabilities below this "
    "scaled threshold are excluded from sampling\")",
    source=API, probes=(BASELINES, "min-p"), traits=FRIENDLI_WIRE, features=("min_p",),
    faults=("min-p-ignored",),
)
def min_p_honoured(ctx: CheckContext) -> None:
    sampled_is_greedy(ctx, "min-p", "min_p 1")
