"""Parameters with a visible effect: token prompts, logit_bias, n, best_of, max_tokens.

Spec: ``CompletionRequest`` in ``spec/completions.yaml``: ``prompt`` ("a list of token ids, or
a list of lists of token ids"), ``logit_bias`` ("-100 bans a token and 100 all but forces
it"), ``n`` ("How many completions to generate for each prompt"), ``best_of`` ("return the
``n`` best, ranked by mean token log probability. Must be at least ``n``"), ``MaxTokens`` ("The
maximum number of tokens to generate"). A parameter that is accepted and silently ignored is a
violation (bug class 18).
"""

from __future__ import annotations

from conformance.model import NotApplicable, Violation
from conformance.probes.logprob_tokens import generated_tokens
from conformance.run.check_context import CheckContext
from conformance.views import compact, logprob_arrays
from spec import JSON

from .base import BUGS, MUST, OPENAI_WIRE, SCHEMAS, SHOULD, SPEC, rule
from .common import choice_of, choices_of, text_of, usage_of
from .shared_checks import MAX_TOKENS_RUNS, generated_count

REQUEST = f"{SCHEMAS}/CompletionRequest/properties"


@rule(
    "PARAMS-001", MUST, "Token-id prompts are accepted",
    requirement="prompt as [int] and as [[int]] is answered 200, with prompt_tokens equal to "
    "the number of ids.",
    citation=f"{REQUEST}/prompt; {BUGS} #32",
    source=SPEC, probes=("token-prompts",), traits=OPENAI_WIRE, features=("token_prompts",),
    faults=("token-prompt-rejected",),
)
def token_prompts_accepted(ctx: CheckContext) -> None:
    length = ctx.note("token-prompts", "length")
    for key in ("flat", "nested"):
        exchange = ctx.exchange("token-prompts", key)
        if exchange.status != 200:
            raise Violation(
                f"a token-id prompt ({key}) was not accepted",
                expected=200, actual=exchange.status, path="status",
                exchange=f"token-prompts/{key}",
                evidence=exchange.body.decode("utf-8", "replace")[:300],
            )
        prompt_tokens = usage_of(ctx, "token-prompts", key)[0]
        if prompt_tokens != length:
            raise Violation(
                f"prompt_tokens of a {length}-id prompt ({key}) is {prompt_tokens}",
                expected=length, actual=prompt_tokens, path="usage.prompt_tokens",
                exchange=f"token-prompts/{key}",
                evidence=compact(ctx.response("token-prompts", key).get("usage")),
            )


def _tokens(ctx: CheckContext, key: str) -> list[str] | None:
    """The generated tokens of ``logit-bias/key``, from logprobs in either shape
    (:func:`generated_tokens`); None when they name none (then the text is judged)."""
    return generated_tokens(choice_of(ctx, "logit-bias", key).get("logprobs")) or None


def _no_tokens(ctx: CheckContext, key: str) -> str:
    """Why ``logit-bias/key`` names no generated token, with the rule that judges that."""
    value = choice_of(ctx, "logit-bias", key).get("logprobs")
    judge = "SCHEMA-001" if isinstance(value, dict) else "LOGPROBS-002"
    return f"logit-bias/{key} has no logprobs tokens (judged by {judge})"


def _token_count(ctx: CheckContext, key: str) -> int | None:
    """How many tokens ``logit-bias/key`` generated: its max_tokens when cut by it, else its
    usage's completion_tokens (None: unknown)."""
    choice = choice_of(ctx, "logit-bias", key)
    limit = ctx.request("logit-bias", key).get("max_tokens")
    if choice.get("finish_reason") == "length" and isinstance(limit, int):
        return limit
    usage = ctx.response("logit-bias", key).get("usage")
    count = usage.get("completion_tokens") if isinstance(usage, dict) else None
    return count if isinstance(count, int) and not isinstance(count, bool) else None


@rule(
    "PARAMS-002", MUST, "logit_bias -100 bans a token",
    requirement="At temperature 0, logit_bias -100 on the greedy first token's id makes "
    "another token come first (without logprobs tokens: the answer is not the greedy one, "
    "text and token count alike).",
    citation=f"{REQUEST}/logit_bias; {BUGS} #30",
    source=SPEC, probes=("logit-bias",), features=("logit_bias", "logprobs"),
    faults=("logit-bias-ignored",),
)
def bias_bans(ctx: CheckContext) -> None:
    choice = choice_of(ctx, "logit-bias", "ban")  # first: a request not sent says why it was not
    banned = ctx.note("logit-bias", "banned")
    if not isinstance(banned, dict):
        raise NotApplicable("the logit-bias probe noted no banned id")
    tokens = _tokens(ctx, "ban")
    if tokens is None:
        _ban_shown_by_text(ctx, banned)
        return
    if tokens[0] == banned.get("token"):
        raise Violation(
            f"token id {banned.get('id')} biased by -100 was still generated first",
            expected=f"a first token other than {banned.get('token')!r}", actual=tokens[0],
            path="choices[0].logprobs.tokens[0]", exchange="logit-bias/ban",
            evidence=compact(choice),
        )


def _ban_shown_by_text(ctx: CheckContext, banned: dict[str, JSON]) -> None:
    """Without logprobs tokens (the id was learned from the text through the server's
    tokenizer), a ban ignored shows as the greedy answer again: the same text in as many
    tokens. Another text is a ban honoured; the same text in another number of tokens may be
    the banned word spelt by other tokens, which a ban allows."""
    text = text_of(choice_of(ctx, "logit-bias", "ban"), "logit-bias/ban")
    greedy = text_of(choice_of(ctx, "logit-bias", "baseline"), "logit-bias/baseline")
    if text != greedy:
        return
    count, greedy_count = _token_count(ctx, "ban"), _token_count(ctx, "baseline")
    if count is None or count != greedy_count:
        raise NotApplicable(
            f"{_no_tokens(ctx, 'ban')}, and its text is the greedy one in "
            f"{count if count is not None else 'an unknown number of'} tokens "
            f"(the greedy answer's: {greedy_count}): other tokens may spell it")
    raise Violation(
        f"token id {banned.get('id')} biased by -100 left the greedy answer unchanged",
        expected=f"an answer not starting with {banned.get('token')!r}", actual=text,
        path="choices[0].text", exchange="logit-bias/ban",
        evidence=compact({"logit_bias": {str(banned.get("id")): -100}, "text": text,
                          "tokens": count}),
    )


@rule(
    "PARAMS-003", MUST, "logit_bias +100 forces a token",
    requirement="At temperature 0, logit_bias +100 on a token's id makes every generated "
    "token that token (without logprobs tokens: the text is that token's text repeated).",
    citation=f"{REQUEST}/logit_bias; {BUGS} #30",
    source=SPEC, probes=("logit-bias",), features=("logit_bias", "logprobs"),
    faults=("logit-bias-ignored",),
)
def bias_forces(ctx: CheckContext) -> None:
    choice = choice_of(ctx, "logit-bias", "force")  # first: a request not sent says why
    forced = ctx.note("logit-bias", "forced")
    if not isinstance(forced, dict):
        raise NotApplicable("the logit-bias probe noted no forced id")
    want = forced.get("token")  # None: the id's text is unknown, so one token repeated
    tokens = _tokens(ctx, "force")
    if tokens is None:
        _force_shown_by_text(ctx, forced)
        return
    wrong = [t for t in tokens if t != (tokens[0] if want is None else want)]
    if wrong:
        raise Violation(
            f"token id {forced.get('id')} biased by +100 was not the only token generated",
            expected=want if want is not None else f"{tokens[0]!r} (or one other token) only",
            actual=wrong[0], path="choices[0].logprobs.tokens",
            exchange="logit-bias/force", evidence=compact(choice),
        )


def _force_shown_by_text(ctx: CheckContext, forced: dict[str, JSON]) -> None:
    """Without logprobs tokens, a forced token whose text is known shows in the text: nothing
    but that text, repeated (spaces aside, which a tokenizer may spell apart)."""
    want = forced.get("token")
    if not isinstance(want, str) or not want.strip():
        raise NotApplicable(f"{_no_tokens(ctx, 'force')}, and the forced id's text is unknown")
    text = text_of(choice_of(ctx, "logit-bias", "force"), "logit-bias/force")
    if not text.strip() or text.replace(want.strip(), "").strip():
        raise Violation(
            f"token id {forced.get('id')} biased by +100 was not the only token generated",
            expected=f"{want!r} repeated", actual=text, path="choices[0].text",
            exchange="logit-bias/force",
            evidence=compact({"logit_bias": {str(forced.get("id")): 100}, "text": text}),
        )


@rule(
    "PARAMS-004", MUST, "n > 1 samples independently",
    requirement="n 4 at temperature 1 gives at least two different texts (in one of two "
    "tries), and so does the same request with a seed (each choice samples on its own; the "
    "seed makes the whole answer repeat, not the choices equal).",
    citation=f"{REQUEST}/n; {SCHEMAS}/Seed; {BUGS} #19, #33",
    source=SPEC, probes=("n-sampling",), features=("n",),
    faults=("n-identical", "seeded-n-identical"), fuzz="independent-samples",
)
def n_distinct(ctx: CheckContext) -> None:
    texts: list[list[object]] = []
    for key in ("first", "second"):
        texts.append(_choice_texts(ctx, key))
        if len(set(map(str, texts[-1]))) > 1:
            break
    else:
        exchanges = ctx.outcome("n-sampling").exchanges
        twice = "" if exchanges.get("first") is exchanges.get("second") else ", twice"
        raise Violation(
            f"all n choices are identical at temperature 1{twice}",
            expected="at least two different texts", actual=texts[-1], path="choices[].text",
            exchange="n-sampling/second", evidence=compact(texts[-1]),
        )
    if "seeded" not in ctx.outcome("n-sampling").exchanges:
        return  # no seed claimed: only the unseeded tries are judged
    seeded = _choice_texts(ctx, "seeded")
    if len(set(map(str, seeded))) == 1:
        raise Violation(
            "with a seed, all n choices are identical at temperature 1",
            expected="at least two different texts", actual=seeded, path="choices[].text",
            exchange="n-sampling/seeded", evidence=compact(seeded),
        )


def _choice_texts(ctx: CheckContext, key: str) -> list[object]:
    body = ctx.response("n-sampling", key)
    choices = body.get("choices")
    if not isinstance(choices, list) or len(choices) < 2:
        raise NotApplicable(f"n-sampling/{key} has fewer than 2 choices (INDICES-001)")
    return [c.get("text") if isinstance(c, dict) else None for c in choices]


def _mean(choice: dict) -> float | None:
    arrays = logprob_arrays(choice.get("logprobs"))
    if arrays is None:
        return None
    values = [v for v in arrays["token_logprobs"] if isinstance(v, (int, float))]
    if not values or any(v > 0 for v in values):
        return None
    return sum(values) / len(values)


@rule(
    "PARAMS-005", SHOULD, "best_of returns the best candidate",
    requirement="best_of 3 with n 1 returns the candidate with the highest mean token logprob, "
    "when the candidates are the choices the same seed gives with n 3.",
    citation=f"{REQUEST}/best_of; {BUGS} #18, #20",
    source=SPEC, probes=("best-of",), traits=OPENAI_WIRE, features=("best_of", "seed"),
    faults=("best-of-ignored",),
)
def best_of_ranks(ctx: CheckContext) -> None:
    best = choice_of(ctx, "best-of", "best")
    candidates = list(choices_of(ctx, "best-of", "candidates").values())
    means = [_mean(c) for c in candidates]
    if _mean(best) is None or any(m is None for m in means):
        raise NotApplicable("no usable logprobs to rank the candidates (LOGPROBS rules)")
    texts = [c.get("text") for c in candidates]
    if best.get("text") not in texts:
        raise NotApplicable("the returned text is not among the seeded candidates")
    ranked = [m for m in means if m is not None]
    top = max(ranked)
    chosen = means[texts.index(best.get("text"))]
    if chosen is not None and top - chosen > 1e-9:
        raise Violation(
            "best_of returned a candidate with a lower mean logprob than another",
            expected=texts[means.index(top)], actual=best.get("text"), path="choices[0].text",
            exchange="best-of/best", evidence=compact({"means": means, "texts": texts}),
        )


@rule(
    "PARAMS-006", SHOULD, "best_of equal to n is accepted",
    requirement="best_of == n is accepted (200) and returns n choices (OpenAI's text says "
    "'greater than n', yet OpenAI accepts equality).",
    citation=f"{REQUEST}/best_of; spec x-cross-field-rules best-of-at-least-n; {BUGS} #20",
    source=SPEC, probes=("best-of",), traits=OPENAI_WIRE, features=("best_of",),
    faults=("best-of-equal-n-rejected",),
)
def best_of_equal_n(ctx: CheckContext) -> None:
    exchange = ctx.exchange("best-of", "equal")
    if exchange.status != 200:
        raise Violation(
            "best_of == n was rejected", expected=200, actual=exchange.status, path="status",
            exchange="best-of/equal", evidence=exchange.body.decode("utf-8", "replace")[:300],
        )


@rule(
    "PARAMS-007", MUST, "max_tokens is never exceeded",
    requirement="completion_tokens and the number of generated logprobs tokens never exceed "
    "max_tokens.",
    citation=f"{SCHEMAS}/MaxTokens; {BUGS} #5",
    source=SPEC, probes=("greedy", "length"), faults=("max-tokens-overrun",), fuzz="length-short",
)
def max_tokens_honoured(ctx: CheckContext) -> None:
    for probe, key in MAX_TOKENS_RUNS:
        limit = ctx.request(probe, key).get("max_tokens")
        if not isinstance(limit, int):
            continue
        choice = choice_of(ctx, probe, key)
        generated = generated_count(ctx, probe, key)
        if generated > limit:
            raise Violation(
                f"more than max_tokens {limit} tokens were generated",
                expected=f"<= {limit}", actual=generated,
                path="usage.completion_tokens", exchange=f"{probe}/{key}",
                evidence=compact(ctx.response(probe, key).get("usage")),
            )
        _ = text_of(choice, f"{probe}/{key}")
