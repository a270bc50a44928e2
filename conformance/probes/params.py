"""Probes of parameters that must have a visible effect: token prompts, logit_bias, best_of.

Spec: ``CompletionRequest.prompt`` (a list of token ids, or of such lists), ``logit_bias``
("-100 bans a token and 100 all but forces it"), ``best_of`` ("Generate ``best_of``
candidates per prompt server-side and return the ``n`` best, ranked by mean token log
probability") in ``spec/completions.yaml``; bug classes 18, 20, 30 and 32.
"""

from __future__ import annotations

from spec import JSON

from .model import Probe, ProbeSession, first_choice
from .prompts import (
    BEST_OF,
    BEST_OF_SEED,
    PROMPT_A,
    SAMPLING_TEMPERATURE,
    TOKEN_PROMPT,
    VOCAB_COUNT,
    VOCAB_FIRST_ID,
)
from .token_ids import first_generated_id


async def token_prompts(s: ProbeSession) -> None:
    """``prompt: [int]`` and ``prompt: [[int]]``, and the flat one streamed."""
    ids = list(TOKEN_PROMPT)
    common = {"max_tokens": 4, "temperature": 0}
    await s.gather(
        s.complete("flat", s.body(ids, **common)),
        s.complete("nested", s.body([ids], **common)),
        s.complete("flat_s", s.body(ids, **common, stream=True)),
    )
    s.note("length", len(ids))


async def vocab(s: ProbeSession) -> None:
    """Decode a range of token ids: echo a token prompt with ``max_tokens: 0`` and logprobs."""
    ids = list(range(VOCAB_FIRST_ID, VOCAB_FIRST_ID + VOCAB_COUNT))
    exchange = await s.complete(
        "decode", s.body(ids, max_tokens=0, echo=True, logprobs=0, temperature=0)
    )
    s.note("ids", ids)
    choice = first_choice(exchange)
    lp = choice.get("logprobs") if choice else None
    tokens = lp.get("tokens") if isinstance(lp, dict) else None
    if isinstance(tokens, list) and len(tokens) == len(ids):
        if all(isinstance(t, str) for t in tokens):
            s.note("table", {str(i): t for i, t in zip(ids, tokens, strict=False)})


def _plain_word(token: str) -> bool:
    word = token[1:] if token.startswith(" ") else ""
    return len(word) >= 2 and word.isascii() and word.isalpha()


def pick_forced(table: dict[str, str], avoid: set[str]) -> tuple[str, str | None] | None:
    """A token id (and its text) that is a plain word with a leading space."""
    for token_id, token in table.items():
        if token_id not in avoid and _plain_word(token):
            return token_id, token
    return None


async def logit_bias(s: ProbeSession) -> None:
    """Greedy baseline; then -100 on its first token's id and +100 on another word's id.

    Without a decoded vocabulary (a server that takes no token-id prompts) the banned id comes
    from the server's tokenizer endpoint, if it has one (:mod:`conformance.probes.token_ids`);
    +100 is aimed anyway: on an id of :data:`TOKEN_PROMPT`, whose text is then unknown, every
    generated token must be one and the same."""
    common: dict[str, JSON] = {"temperature": 0, "logprobs": 0}
    base = await s.complete("baseline", s.body(PROMPT_A, max_tokens=4, **common))
    table = s.earlier("vocab").notes.get("table")
    choice = first_choice(base)
    lp = choice.get("logprobs") if choice else None
    tokens = lp.get("tokens") if isinstance(lp, dict) else None
    if not isinstance(tokens, list) or not tokens:
        reason = "the baseline has no logprobs tokens (LOGPROBS-002)"
        s.missing("ban", reason)
        s.missing("force", reason)
        return
    steps = []
    ban: list[str] = []
    forced: tuple[str, str | None] | None = (str(TOKEN_PROMPT[0]), None)
    first = tokens[0]
    if isinstance(table, dict):
        ban = [token_id for token_id, token in table.items() if token == first]
        forced = pick_forced(table, set(ban))
    else:
        text = choice.get("text") if choice else None
        learned = await first_generated_id(s, PROMPT_A, str(text or ""), str(first))
        if learned.token_id is not None:
            ban = [str(learned.token_id)]
    if ban:
        s.note("banned", {"id": ban[0], "token": first})
        body = s.body(PROMPT_A, max_tokens=4, logit_bias={ban[0]: -100}, **common)
        steps.append(s.complete("ban", body))
    elif isinstance(table, dict):
        s.missing("ban", f"the baseline's first token {first!r} is not among the decoded ids")
    else:
        s.missing("ban", "no decoded vocabulary to find the greedy token's id (the vocab "
                         "probe's echo of token ids: ECHO-005, ERRORS-008), and no tokenizer "
                         f"endpoint gave it: {learned.reason}")
    if forced:
        s.note("forced", {"id": forced[0], "token": forced[1]})
        body = s.body(PROMPT_A, max_tokens=3, logit_bias={forced[0]: 100}, **common)
        steps.append(s.complete("force", body))
    else:
        s.missing("force", "no plain word among the decoded ids")
    await s.gather(*steps)


async def best_of(s: ProbeSession) -> None:
    """``best_of: 3, n: 1`` seeded; the same seed with ``n: 3``; and ``best_of == n``."""
    logprobs = 0 if s.claims("logprobs") else None
    common = {
        "max_tokens": s.settings.max_tokens,
        "temperature": SAMPLING_TEMPERATURE,
        "logprobs": logprobs,
    }
    seed = BEST_OF_SEED if s.claims("seed") else None
    await s.gather(
        s.complete("best", s.body(PROMPT_A, **common, best_of=BEST_OF, n=1, seed=seed)),
        s.complete("candidates", s.body(PROMPT_A, **common, n=BEST_OF, seed=seed)),
        s.complete("equal", s.body(PROMPT_A, max_tokens=4, temperature=1.0, best_of=2, n=2)),
    )


PROBES = (
    Probe("token-prompts", "prompts given as [int] and [[int]]", token_prompts,
          features=("token_prompts",)),
    Probe("vocab", "decode token ids by echoing a token prompt", vocab,
          features=("token_prompts", "echo", "echo_logprobs", "max_tokens_zero")),
    Probe("logit-bias", "logit_bias -100 on the greedy token, +100 on another", logit_bias,
          features=("logit_bias", "logprobs"), needs=("vocab",)),
    Probe("best-of", "best_of 3 against the same seed's 3 candidates", best_of,
          features=("best_of",)),
)
