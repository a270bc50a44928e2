"""Probes of parameters that must have a visible effect: token prompts, logit_bias, best_of.

Spec: ``CompletionRequest.prompt`` (a list of token ids, or of such lists), ``logit_bias``
("-100 bans a token and 100 all but forces it"), ``best_of`` ("Generate ``best_of``
candidates per prompt server-side and return the ``n`` best, ranked by mean token log
probability") in ``spec/completions.yaml``; bug classes 18, 20, 30 and 32.
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.transport import Exchange, Termination
from spec import JSON

from .decoded_ids import decode_body, decode_page, further_pages, ids_of, page_ids, table_of
from .logprob_tokens import generated_tokens
from .model import ProbeSession, first_choice
from .prompts import (
    BEST_OF,
    BEST_OF_SEED,
    PROMPT_A,
    SAMPLING_TEMPERATURE,
    TOKEN_PROMPT,
    VOCAB_COUNT,
    VOCAB_FIRST_ID,
)
from .registry import probe
from .token_ids import LearnedId, first_generated_id, generated_ids


@probe("token-prompts", "prompts given as [int] and [[int]]", features=("token_prompts",))
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


@probe("vocab", "decode token ids by echoing a token prompt",
       features=("token_prompts", "echo", "echo_logprobs", "max_tokens_zero"))
async def vocab(s: ProbeSession) -> None:
    """Decode a range of token ids: echo a token prompt with ``max_tokens: 0`` and logprobs."""
    ids = page_ids(VOCAB_FIRST_ID)
    exchange = await s.complete("decode", decode_body(s, ids))
    s.note("ids", ids)
    table = table_of(first_choice(exchange), ids)
    if table is not None:
        s.note("table", table)


def _plain_word(token: str) -> bool:
    word = token[1:] if token.startswith(" ") else ""
    return len(word) >= 2 and word.isascii() and word.isalpha()


def pick_forced(table: dict[str, str], avoid: set[str]) -> tuple[str, str | None] | None:
    """A token id (and its text) that is a plain word with a leading space."""
    for token_id, token in table.items():
        if token_id not in avoid and _plain_word(token):
            return token_id, token
    return None


@probe("logit-bias", "logit_bias -100 on the greedy token, +100 on another",
       features=("logit_bias", "logprobs"), needs=("vocab",))
async def logit_bias(s: ProbeSession) -> None:
    """Greedy baseline; then -100 on its first token's id and +100 on another word's id.

    The first token comes from the baseline's logprobs (either shape: :func:`generated_tokens`)
    or, when they name none (llama.cpp's server answers ``logprobs: 0`` with no logprobs at
    all), from its text through the server's tokenizer endpoint. Its id comes from the
    ``vocab`` probe's decoded ids, then from further pages decoded by echo
    (:mod:`conformance.probes.decoded_ids`), then from the tokenizer endpoint
    (:mod:`conformance.probes.token_ids`). +100 goes to a plain word among the decoded ids, else
    to the id the tokenizer gives :data:`FORCED_WORD`, else to an id of :data:`TOKEN_PROMPT`,
    whose text is then unknown: every generated token must be one and the same."""
    common: dict[str, JSON] = {"temperature": 0, "logprobs": 0}
    base = await s.complete("baseline", s.body(PROMPT_A, max_tokens=4, **common))
    choice = first_choice(base)
    if choice is None:
        unusable = _unusable_baseline(base)
        s.missing("ban", unusable)
        s.missing("force", unusable)
        return
    text = str(choice.get("text") or "")
    tokens = generated_tokens(choice.get("logprobs"))
    learned: LearnedId | None = None
    first = tokens[0] if tokens else None
    if first is None:
        learned = await first_generated_id(s, PROMPT_A, text, None)
        first = learned.token
    table = s.earlier("vocab").notes.get("table")
    search = await _search(s, table if isinstance(table, dict) else None, first)
    ban = ids_of(search.table, first) if first is not None else []
    if not ban and learned is None and first is not None:
        learned = await first_generated_id(s, PROMPT_A, text, first)
    if not ban and learned is not None and learned.token_id is not None:
        ban = [str(learned.token_id)]
    steps = []
    if ban:
        s.note("banned", {"id": ban[0], "token": first})
        body = s.body(PROMPT_A, max_tokens=4, logit_bias={ban[0]: -100}, **common)
        steps.append(s.complete("ban", body))
    else:
        tried = [search.tried] + ([f"the tokenizer endpoints: {learned.reason}"]
                                  if learned is not None else [])
        unfound = (f"the id of the baseline's first token {first!r} was not found"
                   if first is not None else
                   f"{_no_tokens(choice.get('logprobs'))} and its text gave no id")
        s.missing("ban", f"{unfound}: " + "; ".join(tried))
    forced: tuple[str, str | None] | None = None
    unforced = ""
    if search.table:
        forced = pick_forced(search.table, set(ban))
        unforced = f"no plain word among the decoded ids ({search.tried})"
    elif tokens:  # the logprobs tokens show whether one and the same token repeats
        forced = (str(TOKEN_PROMPT[0]), None)
    else:
        forced, why = await _word_from_tokenizer(s, set(ban))
        unforced = (f"{_no_tokens(choice.get('logprobs'))} and no id's text is known: "
                    f"{search.tried}; {why}")
    if forced:
        s.note("forced", {"id": forced[0], "token": forced[1]})
        body = s.body(PROMPT_A, max_tokens=3, logit_bias={forced[0]: 100}, **common)
        steps.append(s.complete("force", body))
    else:
        s.missing("force", unforced)
    await s.gather(*steps)


FORCED_WORD = " the"
"""The word forced by +100 when no ids were decoded by echo: its id from the tokenizer."""


async def _word_from_tokenizer(
    s: ProbeSession, avoid: set[str]
) -> tuple[tuple[str, str] | None, str]:
    """:data:`FORCED_WORD`'s id as the server's tokenizer gives it after :data:`PROMPT_A`
    (when it is one token, not to be avoided), so a forced answer without logprobs tokens is
    judged by its text; else None and why."""
    found = await generated_ids(s, PROMPT_A, FORCED_WORD, label="force-word")
    if found.ids is None:
        return None, f"the tokenizer endpoints: {found.reason}"
    if len(found.ids) != 1 or str(found.ids[0]) in avoid:
        return None, f"the tokenizer gives {FORCED_WORD!r} the ids {list(found.ids)}"
    return (str(found.ids[0]), FORCED_WORD), ""


def _no_tokens(logprobs: JSON) -> str:
    """Why a choice's logprobs name no token, with the rule that judges that."""
    judge = "SCHEMA-001" if isinstance(logprobs, dict) else "LOGPROBS-002"
    return f"the baseline has no logprobs tokens ({judge})"


def _unusable_baseline(base: Exchange) -> str:
    """Why the baseline gives no choice to aim at, naming the rule that judges that (none for
    a server that asked to be tried later: ERRORS-008 does not judge that)."""
    cut = base.termination is Termination.CONNECTION_ERROR
    if base.status == 200 and not cut:
        return ("the baseline logit-bias/baseline gave no choice (judged by INDICES-001 / "
                "SCHEMA-001)")
    status = "cut off" if cut else f"HTTP {base.status}"
    judge = "" if base.status in LATER else "; judged by ERRORS-008"
    return f"the baseline logit-bias/baseline gave no choice ({status}{judge})"


LATER = (429, 503)
"""Statuses that ask the client to come back later: not a refusal ERRORS-008 fails."""


@dataclass(frozen=True)
class Search:
    """The ids decoded so far (the ``vocab`` probe's and further pages'), and what was tried."""

    table: dict[str, str]
    tried: str


async def _search(s: ProbeSession, table: dict[str, str] | None, first: str | None) -> Search:
    """Decode further pages while the first token's id (or a plain word to force) is missing,
    when the ``vocab`` probe could decode ids at all."""
    if table is None:
        return Search({}, f"no ids were decoded ({_undecoded(s)})")
    merged, decoded = dict(table), [f"{VOCAB_FIRST_ID}-{VOCAB_FIRST_ID + VOCAB_COUNT - 1}"]
    for start in further_pages():
        found = first is None or ids_of(merged, first)
        if found and pick_forced(merged, set(ids_of(merged, first or ""))):
            break
        page = await decode_page(s, start)
        if page is None:
            decoded.append(f"{start}-{start + VOCAB_COUNT - 1} (not decoded)")
            break
        merged.update(page)
        decoded.append(f"{start}-{start + VOCAB_COUNT - 1}")
    return Search(merged, f"ids {', '.join(decoded)} decoded by echo")


def _undecoded(s: ProbeSession) -> str:
    """Why the ``vocab`` probe's echo of token ids decoded none, naming only the rule that
    judges what went wrong (a reason that points at a rule that passed sends a reader
    nowhere)."""
    vocab = s.earlier("vocab")
    decode = vocab.exchanges.get("decode")
    if decode is None:
        return f"the vocab probe did not run: {vocab.skipped or vocab.problem or 'not sent'}"
    cut = decode.termination is Termination.CONNECTION_ERROR
    if decode.status != 200 or cut:
        status = "cut off" if cut else f"HTTP {decode.status}"
        judge = "" if decode.status in LATER else " (ERRORS-008 / PARAMS-001)"
        return f"the vocab probe's echo of token ids got {status}{judge}"
    choice = first_choice(decode)
    if choice is None:
        return "the vocab probe's echo of token ids has no choice (INDICES-001 / SCHEMA-001)"
    logprobs = choice.get("logprobs")
    if not isinstance(logprobs, dict):
        return "the vocab probe's echo of token ids has no logprobs object (LOGPROBS-002)"
    tokens = logprobs.get("tokens")
    if not isinstance(tokens, list):  # the chat shape, or none: ECHO-005 reads neither
        return "the vocab probe's echo of token ids has no logprobs tokens array (SCHEMA-001)"
    if len(tokens) < VOCAB_COUNT:
        return (f"the vocab probe's echo of {VOCAB_COUNT} token ids has {len(tokens)} "
                "logprobs tokens (ECHO-005)")
    return (f"the vocab probe's echo of {VOCAB_COUNT} token ids has {len(tokens)} logprobs "
            "tokens, not one per id")


@probe("best-of", "best_of 3 against the same seed's 3 candidates", features=("best_of",))
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
