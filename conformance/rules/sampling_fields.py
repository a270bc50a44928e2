"""Sampling fields whose effect shows on any model: penalties, top_k, banned and forced tokens.

Spec: ``PresencePenalty`` / ``FrequencyPenalty`` in ``spec/completions.yaml`` ("Subtracted once
from the logit of every token already generated" / "once per time it was already generated"),
and ``FriendliCompletionRequest``'s ``top_k``, ``bad_word_tokens`` ("Token sequences that must
not be generated"), ``bad_words`` ("Phrases that must not be generated. A phrase is tokenized;
when the output ends with its first N-1 tokens, its last token is banned") and
``forced_output_tokens`` ("A token sequence forced as the output").

Where the contract is exact in token ids, the rule is a MUST: a banned token id never appears
among the choice's ``tokens``, and forced ids are its first ones. Where servers may implement
the effect differently, it is a SHOULD: no text promises by how much a penalty of 2 moves a
greedy answer, a server may spell a banned phrase with other tokens than the ones it banned,
and ``top_k: 1`` equals greedy decoding only up to ties and kernels.
"""

from __future__ import annotations

from conformance.model import NotApplicable, Violation
from conformance.probes.samplers_huggingface import BASELINES
from conformance.probes.sampling_fields import PENALTY
from conformance.run.check_context import CheckContext
from conformance.views import compact
from spec import JSON

from .base import FRIENDLI_WIRE, MUST, SCHEMAS, SHOULD, SPEC, rule
from .common import choice_of, text_of
from .shared_checks import sampled_is_greedy

FRIENDLI_REQUEST = f"{SCHEMAS}/FriendliCompletionRequest/properties"


def _repeats(ctx: CheckContext) -> str:
    """The key of the greedy answer whose tokens (from its logprobs, or from its text through
    the server's tokenizer) repeat one: the penalized requests are its twins."""
    choice_of(ctx, "penalties", "greedy")  # first: a greedy request refused says so
    notes = ctx.outcome("penalties").notes
    key = notes.get("repeating")
    if not isinstance(key, str):
        reason = notes.get("unrepeated")
        raise NotApplicable(str(reason) if reason else "the penalties probe found no greedy "
                            "answer that repeats a token")
    return key


def _penalty_changes(ctx: CheckContext, key: str, field: str) -> None:
    greedy = _repeats(ctx)
    base = text_of(choice_of(ctx, "penalties", greedy), f"penalties/{greedy}")
    penalized = text_of(choice_of(ctx, "penalties", key), f"penalties/{key}")
    if penalized == base:
        raise Violation(
            f"{field} {PENALTY} left a greedy answer that repeats tokens unchanged",
            expected=f"a text other than {base!r}", actual=penalized, path="choices[0].text",
            exchange=f"penalties/{key}", evidence=compact({field: PENALTY, "text": penalized}),
        )


@rule(
    "SAMPLING-001", SHOULD, "presence_penalty changes a repeating greedy answer",
    requirement=f"A greedy answer that repeats one of its tokens differs under presence_penalty "
    f"{PENALTY} (a repeated token's logit falls by {PENALTY}).",
    citation=f"{SCHEMAS}/PresencePenalty (\"Subtracted once from the logit of every token "
    "already generated\")",
    source=SPEC, probes=("penalties",), features=("penalties", "logprobs"),
    faults=("penalties-ignored",),
)
def presence_penalty_honoured(ctx: CheckContext) -> None:
    _penalty_changes(ctx, "presence", "presence_penalty")


@rule(
    "SAMPLING-002", SHOULD, "frequency_penalty changes a repeating greedy answer",
    requirement=f"A greedy answer that repeats one of its tokens differs under "
    f"frequency_penalty {PENALTY} (a repeated token's logit falls by {PENALTY} per occurrence).",
    citation=f"{SCHEMAS}/FrequencyPenalty (\"Subtracted from a token's logit once per time it "
    "was already generated\")",
    source=SPEC, probes=("penalties",), features=("penalties", "logprobs"),
    faults=("penalties-ignored",),
)
def frequency_penalty_honoured(ctx: CheckContext) -> None:
    _penalty_changes(ctx, "frequency", "frequency_penalty")


@rule(
    "FRIENDLI-016", SHOULD, "top_k 1 keeps only the most likely token",
    requirement="At temperature 1 with top_k 1 only the most likely token may be drawn: the "
    "seeded answer equals the greedy one.",
    citation=f"{FRIENDLI_REQUEST}/top_k; FriendliAI dedicated completions API, top_k (\"The "
    "number of highest probability tokens to keep for sampling\")",
    source=SPEC, probes=(BASELINES, "top-k"), traits=FRIENDLI_WIRE, features=("top_k",),
    faults=("top-k-ignored",),
)
def top_k_honoured(ctx: CheckContext) -> None:
    sampled_is_greedy(ctx, "top-k", "top_k 1")


def _choice_tokens(ctx: CheckContext, probe: str, key: str) -> list[JSON]:
    tokens = choice_of(ctx, probe, key).get("tokens")
    if not isinstance(tokens, list):
        raise NotApplicable(f"{probe}/{key}: the choice has no tokens (judged by FRIENDLI-006)")
    return tokens


@rule(
    "FRIENDLI-017", MUST, "bad_word_tokens are never generated",
    requirement="With bad_word_tokens holding the greedy answer's first token id, that id does "
    "not occur among the choice's generated tokens.",
    citation=f"{FRIENDLI_REQUEST}/bad_word_tokens (\"Token sequences that must not be "
    "generated\")",
    source=SPEC, probes=(BASELINES, "bad-words"), traits=FRIENDLI_WIRE,
    features=("bad_words", "choice_tokens"), faults=("bad-words-ignored",),
)
def bad_word_tokens_honoured(ctx: CheckContext) -> None:
    banned = ctx.note("bad-words", "tokens")
    if not isinstance(banned, list) or len(banned) != 1:
        raise NotApplicable("the bad-words probe banned no token id")
    tokens = _choice_tokens(ctx, "bad-words", "tokens")
    if banned[0] in tokens:
        position = tokens.index(banned[0])
        raise Violation(
            f"the banned token id {banned[0]} was generated",
            expected=f"no {banned[0]}", actual=tokens, path=f"choices[0].tokens[{position}]",
            exchange="bad-words/tokens", evidence=compact(tokens),
        )


@rule(
    "FRIENDLI-018", SHOULD, "bad_words are not in the text",
    requirement="With bad_words holding the greedy answer's first word, the text does not "
    "contain that word (a server bans the phrase's own tokens: another spelling of it in other "
    "tokens is possible, so SHOULD).",
    citation=f"{FRIENDLI_REQUEST}/bad_words (\"Phrases that must not be generated\")",
    source=SPEC, probes=(BASELINES, "bad-words"), traits=FRIENDLI_WIRE,
    features=("bad_words",), faults=("bad-words-ignored",),
)
def bad_words_honoured(ctx: CheckContext) -> None:
    word = ctx.note("bad-words", "word")
    if not isinstance(word, str) or not word:
        raise NotApplicable("the bad-words probe banned no word")
    text = text_of(choice_of(ctx, "bad-words", "words"), "bad-words/words")
    if word in text:
        raise Violation(
            f"the banned word {word!r} is in the text", expected=f"a text without {word!r}",
            actual=text, path="choices[0].text", exchange="bad-words/words",
            evidence=compact({"bad_words": [word], "text": text}),
        )


@rule(
    "FRIENDLI-019", MUST, "forced_output_tokens start the output",
    requirement="With forced_output_tokens, the choice's generated token ids begin with them.",
    citation=f"{FRIENDLI_REQUEST}/forced_output_tokens (\"A token sequence forced as the "
    "output\")",
    source=SPEC, probes=(BASELINES, "forced-output"), traits=FRIENDLI_WIRE,
    features=("forced_output_tokens", "choice_tokens"), faults=("forced-output-ignored",),
    fuzz="forced-output",
)
def forced_output_honoured(ctx: CheckContext) -> None:
    forced = ctx.note("forced-output", "forced")
    if not isinstance(forced, list) or not forced:
        raise NotApplicable("the forced-output probe forced no token ids")
    tokens = _choice_tokens(ctx, "forced-output", "forced")
    if tokens[:len(forced)] != forced:
        raise Violation(
            "the output does not begin with the forced tokens", expected=forced,
            actual=tokens[:len(forced)], path="choices[0].tokens", exchange="forced-output/forced",
            evidence=compact(tokens),
        )
