"""FriendliAI's Hugging Face-style samplers, each beside the greedy request it changes.

Spec: ``FriendliCompletionRequest`` in ``spec/completions.yaml`` and FriendliAI's dedicated
completions API: ``min_tokens`` ("The minimum number of tokens to generate"),
``min_total_tokens`` / ``max_total_tokens`` ("the generated result and the input tokens"),
``no_repeat_ngram`` ("every ngram of that size can only occur once among the generated
result"), ``repetition_penalty`` ("Penalizes tokens that have already appeared in the
generated result") and ``min_p`` ("Tokens with probabilities below this scaled threshold are
excluded from sampling").

Two greedy baselines serve them all: :data:`ENDING_PROMPT` ends a sentence soon (a model
stops early there, so holding off the end is visible) and :data:`LOOPING_PROMPT` repeats
tokens and pairs of tokens within :data:`MAX_TOKENS` (so a ban or a penalty on repeats is
visible). Every request is greedy or, for ``min_p``, seeded: a server that honours the field
answers the same way every time.
"""

from __future__ import annotations

from spec import JSON

from .friendli import FRIENDLI
from .model import ProbeBody, ProbeSession, ok_json
from .prompts import SAMPLING_TEMPERATURE, SEED
from .registry import probe

ENDING_PROMPT = "It was going to be a fine"
"""A sentence about to end: greedy models finish it and stop in a few tokens."""
LOOPING_PROMPT = "Example:"
"""Code follows: greedy output repeats tokens (commas, names) and pairs of tokens."""
MAX_TOKENS = 16
MIN_TOKENS = 12
"""Asked for with :data:`ENDING_PROMPT`, whose greedy answer ends before this many tokens."""
TOTAL_MARGIN = 4
"""``max_total_tokens`` is the prompt's tokens plus this: fewer than the greedy answer's."""
NGRAM = 2
REPETITION_PENALTY = 10.0
"""Far above the usual 1.0-2.0: a repeated token's score falls below an unseen one's."""
MIN_P = 1.0
"""Only the most likely token survives: sampling becomes greedy."""

BASELINES = "sampler-baselines"


def _greedy(prompt: str, **fields: JSON) -> dict[str, JSON]:
    return {"prompt": prompt, "max_tokens": MAX_TOKENS, "temperature": 0, **fields}


@probe(BASELINES, "greedy answers of a sentence about to end and of a repeating one",
       traits=FRIENDLI)
async def baselines(s: ProbeSession) -> None:
    """The two greedy answers the sampler probes are compared with."""
    await s.gather(
        s.complete("ending", s.body(**_greedy(ENDING_PROMPT))),
        s.complete("looping", s.body(**_greedy(LOOPING_PROMPT))),
    )


def _prompt_tokens(s: ProbeSession) -> int | None:
    """The ending prompt's token count, from its baseline's usage."""
    ending = s.earlier(BASELINES).exchanges.get("ending")
    body = ok_json(ending) if ending is not None else None
    usage = body.get("usage") if body else None
    count = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else None


@probe("min-tokens", "min_tokens past where the greedy answer ends",
       features=("min_tokens",))  # both wires: FriendliAI's and vLLM's min_tokens
async def min_tokens(s: ProbeSession) -> None:
    await s.complete("min", s.body(**_greedy(ENDING_PROMPT, min_tokens=MIN_TOKENS)))


@probe("min-total-tokens", "min_total_tokens past where the greedy answer ends",
       features=("min_total_tokens",), traits=FRIENDLI, needs=(BASELINES,))
async def min_total_tokens(s: ProbeSession) -> None:
    prompt = _prompt_tokens(s)
    if prompt is None:
        s.missing("min", "the baseline reported no prompt_tokens to add min_total_tokens to")
        return
    await s.complete("min", s.body(**_greedy(ENDING_PROMPT,
                                             min_total_tokens=prompt + MIN_TOKENS)))


@probe("max-total-tokens", "max_total_tokens below the greedy answer's total",
       features=("max_total_tokens",), traits=FRIENDLI, needs=(BASELINES,))
async def max_total_tokens(s: ProbeSession) -> None:
    prompt = _prompt_tokens(s)
    if prompt is None:
        s.missing("max", "the baseline reported no prompt_tokens to add max_total_tokens to")
        return
    body = s.body(ENDING_PROMPT, temperature=0, max_total_tokens=prompt + TOTAL_MARGIN)
    await s.complete("max", body)


def _one_request(key: str, **fields: JSON) -> ProbeBody:
    """A probe body sending one greedy request on :data:`LOOPING_PROMPT` with ``fields``."""
    async def run(s: ProbeSession) -> None:
        await s.complete(key, s.body(**_greedy(LOOPING_PROMPT, **fields)))
    return run


probe("no-repeat-ngram", f"no_repeat_ngram {NGRAM} on a repeating greedy answer",
      features=("no_repeat_ngram", "choice_tokens"), traits=FRIENDLI)(
    _one_request("banned", no_repeat_ngram=NGRAM))
probe("repetition-penalty", f"repetition_penalty {REPETITION_PENALTY} on a repeating greedy answer",
      features=("repetition_penalty", "choice_tokens"), traits=FRIENDLI, needs=(BASELINES,))(
    _one_request("penalized", repetition_penalty=REPETITION_PENALTY))
probe("min-p", f"min_p {MIN_P} at temperature {SAMPLING_TEMPERATURE}, seeded",
      features=("min_p",), traits=FRIENDLI, needs=(BASELINES,))(
    _one_request("sampled", min_p=MIN_P, temperature=SAMPLING_TEMPERATURE, seed=SEED))
