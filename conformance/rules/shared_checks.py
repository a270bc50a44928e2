"""Judgements several rule areas make alike: tokens that spell a text, a sampled answer that
is the greedy one, min_tokens held, max_tokens overrun, an integer a probe sent.

:mod:`.common` holds the readers (choices, usage, streams); this module holds the parts of a
check that more than one area makes (logprobs and echo; params and finish; FriendliAI's
samplers, its sampling fields and vLLM's extensions), so that no area imports another.
"""

from __future__ import annotations

from collections.abc import Sequence

from conformance.model import NotApplicable, Violation
from conformance.probes.samplers_huggingface import BASELINES, MAX_TOKENS
from conformance.run.check_context import CheckContext
from conformance.views import compact, integer, joined_text_matches, logprob_arrays
from spec import JSON

from .common import choice_of, text_of, usage_of


def tokens_spell_text(tokens: Sequence[JSON], text: str) -> bool:
    return all(isinstance(t, str) for t in tokens) and joined_text_matches(tokens, text)  # type: ignore[arg-type]


def requested_integer(ctx: CheckContext, probe: str, key: str, field: str) -> int:
    """The integer ``field`` of the request ``probe/key`` sent (NotApplicable without one)."""
    value = integer(ctx.request(probe, key).get(field))
    if value is None:
        raise NotApplicable(f"{probe}/{key} sent no integer {field}")
    return value


def min_tokens_held(ctx: CheckContext) -> None:
    """``min-tokens/min`` generated at least min(min_tokens, MAX_TOKENS) tokens: the check of
    both wires' ``min_tokens`` rules (FriendliAI's FRIENDLI-010, vLLM's EXT-001)."""
    _, completion, _ = usage_of(ctx, "min-tokens", "min")
    least = min(requested_integer(ctx, "min-tokens", "min", "min_tokens"), MAX_TOKENS)
    if completion < least:
        raise Violation(
            f"{completion} tokens were generated under min_tokens {least}",
            expected=f">= {least}", actual=completion, path="usage.completion_tokens",
            exchange="min-tokens/min", evidence=compact(choice_of(ctx, "min-tokens", "min")),
        )


def sampled_is_greedy(ctx: CheckContext, probe: str, knob: str) -> None:
    """``probe``'s seeded sample at temperature 1 under ``knob`` (which keeps only the most
    likely token) equals the greedy baseline's text."""
    greedy = text_of(choice_of(ctx, BASELINES, "looping"), f"{BASELINES}/looping")
    sampled = text_of(choice_of(ctx, probe, "sampled"), f"{probe}/sampled")
    if sampled != greedy:
        raise Violation(
            f"sampling under {knob} drew other tokens than the most likely ones",
            expected=greedy, actual=sampled, path="choices[0].text",
            exchange=f"{probe}/sampled", evidence=compact(sampled),
        )


MAX_TOKENS_RUNS = (("length", "short"), ("greedy", "ns"))
"""The runs PARAMS-007 judges: max_tokens 3, and the greedy run's --max-tokens."""


def generated_count(ctx: CheckContext, probe: str, key: str) -> int:
    """The larger of usage's completion_tokens and the logprobs tokens' count."""
    choice = choice_of(ctx, probe, key)
    completion = usage_of(ctx, probe, key)[1]
    arrays = logprob_arrays(choice.get("logprobs"))
    return max(completion, len(arrays["tokens"]) if arrays else 0)


def max_tokens_overrun(ctx: CheckContext) -> str | None:
    """Where PARAMS-007 finds more tokens than max_tokens (``length/short: 4 tokens for
    max_tokens 3``), for the rules that need max_tokens honoured to name it only when it
    fails; None when it finds none or cannot judge."""
    for probe, key in MAX_TOKENS_RUNS:
        try:
            limit = ctx.request(probe, key).get("max_tokens")
            generated = generated_count(ctx, probe, key) if isinstance(limit, int) else 0
        except NotApplicable:
            continue
        if isinstance(limit, int) and generated > limit:
            return f"{probe}/{key}: {generated} tokens for max_tokens {limit}"
    return None
