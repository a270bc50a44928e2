"""FriendliAI's extensions: ``tokens`` prompts, per-chunk ``token``, per-choice ``seed``,
``stop_tokens``.

Spec: ``FriendliCompletionRequest`` (``tokens``: "The tokenized prompt"; ``seed``: "A seed, or
one seed per choice (a list of length ``n``). Without it the server picks seeds; either way
every choice returns the seed it used"; ``stop_tokens``: "Token sequences that end generation
when generated"), ``FriendliChunkChoice.token`` ("The sampled token id; absent on the finish
chunk") and ``FriendliCompletionChoice`` in ``spec/completions.yaml``.
"""

from __future__ import annotations

from conformance.model import NotApplicable, Violation
from conformance.run.check_context import CheckContext
from conformance.views import compact, is_finish, raw_text

from .base import API, FRIENDLI_WIRE, MUST, SCHEMAS, SHOULD, rule
from .common import (
    assembled,
    choice_of,
    choices_of,
    finish_values,
    require_parity,
    text_of,
    usage_of,
)

REQUEST = f"{SCHEMAS}/FriendliCompletionRequest/properties"


@rule(
    "FRIENDLI-001", MUST, "tokens prompts are accepted",
    requirement="A prompt given as `tokens` is answered 200 with prompt_tokens equal to the "
    "number of ids.",
    citation=f"{REQUEST}/tokens",
    source=API, probes=("friendli-tokens",), traits=FRIENDLI_WIRE, features=("tokens_prompt",),
    faults=("token-prompt-rejected",),
)
def tokens_prompt_accepted(ctx: CheckContext) -> None:
    exchange = ctx.exchange("friendli-tokens", "tokens")
    length = ctx.note("friendli-tokens", "length")
    if exchange.status != 200:
        raise Violation(
            "a `tokens` prompt was not accepted", expected=200, actual=exchange.status,
            path="status", exchange="friendli-tokens/tokens",
            evidence=exchange.body.decode("utf-8", "replace")[:300],
        )
    prompt_tokens = usage_of(ctx, "friendli-tokens", "tokens")[0]
    if prompt_tokens != length:
        raise Violation(
            f"prompt_tokens of a {length}-id `tokens` prompt is {prompt_tokens}",
            expected=length, actual=prompt_tokens, path="usage.prompt_tokens",
            exchange="friendli-tokens/tokens",
            evidence=compact(ctx.response("friendli-tokens", "tokens").get("usage")),
        )


@rule(
    "FRIENDLI-002", MUST, "Stream chunks carry the sampled token",
    requirement="Every FriendliAI stream chunk that carries a sampled token's text has its id "
    "in choices[].token.",
    citation=f"{SCHEMAS}/FriendliChunkChoice/properties/token",
    source=API, probes=("greedy",), traits=FRIENDLI_WIRE, features=("token_field",),
    faults=("token-field-missing",), fuzz="any-stream",
)
def chunks_carry_token(ctx: CheckContext) -> None:
    view = ctx.stream("greedy", "s")
    for payload in view.chunks:
        for entry in payload.value.get("choices") or []:
            if not isinstance(entry, dict) or is_finish(entry.get("finish_reason")):
                continue
            token = entry.get("token")
            if entry.get("text") and not (isinstance(token, int) and not isinstance(token, bool)):
                raise Violation(
                    f"event {payload.position} has text but no token id",
                    expected="an integer token", actual=token, path="choices[0].token",
                    exchange="greedy/s", evidence=raw_text(payload.event.raw),
                )


@rule(
    "FRIENDLI-003", MUST, "A seed list sets each choice's seed",
    requirement="With seed [s0, s1] and n 2, choice k returns seed s_k.",
    citation=f"{REQUEST}/seed",
    source=API, probes=("friendli-seeds",), traits=FRIENDLI_WIRE, features=("choice_seed",),
    faults=("seed-ignored",),
)
def seed_list_honoured(ctx: CheckContext) -> None:
    seeds = ctx.note("friendli-seeds", "seeds")
    choices = choices_of(ctx, "friendli-seeds", "list")
    got = [choices[k].get("seed") for k in sorted(choices)]
    if any(s is None for s in got):
        raise NotApplicable("a choice returned no seed (judged by SCHEMA-001)")
    if got != seeds:
        raise Violation(
            "the choices' seeds are not the requested seed list",
            expected=seeds, actual=got, path="choices[].seed", exchange="friendli-seeds/list",
            evidence=compact(got),
        )


@rule(
    "FRIENDLI-004", SHOULD, "A returned seed replays its choice",
    requirement="Sending the seed a choice returned reproduces that choice's text.",
    citation=f"{REQUEST}/seed (\"every choice returns the seed it used\")",
    source=API, probes=("friendli-seeds",), traits=FRIENDLI_WIRE, features=("choice_seed",),
    faults=("seed-ignored",),
)
def seed_replays(ctx: CheckContext) -> None:
    first = text_of(choice_of(ctx, "friendli-seeds", "auto"), "friendli-seeds/auto")
    again = text_of(choice_of(ctx, "friendli-seeds", "replay"), "friendli-seeds/replay")
    if again != first:
        raise Violation(
            "replaying the returned seed gave another text", expected=first, actual=again,
            path="choices[0].text", exchange="friendli-seeds/replay", evidence=compact(again),
        )


@rule(
    "FRIENDLI-005", MUST, "stop_tokens end generation",
    requirement="A generated token id given as stop_tokens ends the greedy text there, with "
    "finish_reason stop.",
    citation=f"{REQUEST}/stop_tokens; FriendliAI dedicated completions API, stop_tokens "
    "(\"Stop generating further tokens when generated token corresponds to any of the tokens "
    f"in the sequence\"); {SCHEMAS}/FinishReason",
    source=API, probes=("stop-tokens",), traits=FRIENDLI_WIRE,
    features=("stop_tokens", "choice_tokens"), faults=("stop-tokens-ignored",),
)
def stop_tokens_honoured(ctx: CheckContext) -> None:
    base = choice_of(ctx, "stop-tokens", "baseline")
    stopped = choice_of(ctx, "stop-tokens", "stopped")
    position = ctx.note("stop-tokens", "position")
    tokens, base_tokens = stopped.get("tokens"), base.get("tokens")
    if not isinstance(tokens, list) or not isinstance(base_tokens, list):
        raise NotApplicable("no token ids in the choices")
    reason = stopped.get("finish_reason")
    if reason not in finish_values(ctx):
        raise NotApplicable(f"finish_reason {reason!r} is not in the enum (FINISH-003)")
    ok = stopped.get("finish_reason") == "stop" and tokens in (
        base_tokens[:position], base_tokens[: int(position) + 1]  # type: ignore[call-overload]
    )
    if not ok:
        raise Violation(
            "the stop token did not end generation where it was generated",
            expected={"tokens": base_tokens[: int(position) + 1], "finish_reason": "stop"},  # type: ignore[call-overload]
            actual={"tokens": tokens, "finish_reason": stopped.get("finish_reason")},
            path="choices[0].tokens", exchange="stop-tokens/stopped", evidence=compact(stopped),
        )


@rule(
    "FRIENDLI-006", SHOULD, "Streamed token ids equal the choice's tokens",
    requirement="At temperature 0, the token ids of a stream's chunks equal the non-streamed "
    "choice's tokens (the stream may leave out only the end-of-text token of a `stop` answer, "
    "which has no text to carry).",
    citation=f"{SCHEMAS}/FriendliCompletionChoice/properties/tokens",
    source=API, probes=("greedy",), traits=FRIENDLI_WIRE, features=("token_field", "choice_tokens"),
    faults=("stream-token-ids-differ", "last-token-id-missing"),
)
def stream_tokens_match(ctx: CheckContext) -> None:
    require_parity(ctx)
    streamed = assembled(ctx, "greedy", "s")[0].tokens
    plain = choice_of(ctx, "greedy", "ns").get("tokens")
    if streamed is None or not streamed:
        raise NotApplicable("the stream carries no token ids (FRIENDLI-002)")
    if not isinstance(plain, list):
        raise NotApplicable("the choice has no tokens (SCHEMA-001)")
    missing = len(plain) - len(streamed)
    ends_on_stop = choice_of(ctx, "greedy", "ns").get("finish_reason") == "stop"
    if plain[: len(streamed)] != streamed or missing > int(ends_on_stop):
        raise Violation(
            "the streamed token ids differ from the choice's tokens"
            + (f" ({missing} of them missing at the end)" if missing > 0 else ""),
            expected=plain, actual=streamed, path="choices[0].tokens", exchange="greedy/s",
            evidence=compact(streamed),
        )
