"""FriendliAI-only probes: ``tokens`` prompts, per-choice seeds, ``stop_tokens``.

Spec: ``FriendliCompletionRequest`` (``tokens``: "The tokenized prompt"; ``seed``: "A seed, or
one seed per choice (a list of length ``n``). Without it the server picks seeds; either way
every choice returns the seed it used"; ``stop_tokens``: "Token sequences that end generation
when generated") and ``FriendliCompletionChoice`` in ``spec/completions.yaml``.
"""

from __future__ import annotations

from .model import ProbeSession, first_choice
from .prompts import OTHER_SEEDS, PROMPT_A, SAMPLING_TEMPERATURE, TOKEN_PROMPT
from .registry import probe

FRIENDLI = ("wire=friendli",)


@probe("friendli-tokens", "a prompt given as FriendliAI `tokens`", features=("tokens_prompt",),
       traits=FRIENDLI)
async def tokens_prompt(s: ProbeSession) -> None:
    ids = list(TOKEN_PROMPT)
    await s.complete("tokens", s.body(tokens=ids, max_tokens=4, temperature=0))
    s.note("length", len(ids))


@probe("friendli-seeds", "seed lists, server-picked seeds and their replay",
       features=("choice_seed",), traits=FRIENDLI)
async def seeds(s: ProbeSession) -> None:
    """A seed list with ``n: 2``; an unseeded request; then its returned seed, replayed."""
    common = {"max_tokens": s.settings.max_tokens, "temperature": SAMPLING_TEMPERATURE}
    _listed, auto = await s.gather(
        s.complete("list", s.body(PROMPT_A, **common, n=2, seed=list(OTHER_SEEDS))),
        s.complete("auto", s.body(PROMPT_A, **common)),
    )
    s.note("seeds", list(OTHER_SEEDS))
    choice = first_choice(auto)
    seed = choice.get("seed") if choice else None
    if isinstance(seed, int) and not isinstance(seed, bool):
        await s.complete("replay", s.body(PROMPT_A, **common, seed=seed))
    else:
        s.missing("replay", "the unseeded choice returned no seed")


@probe("stop-tokens", "a generated token id used as stop_tokens",
       features=("stop_tokens", "choice_tokens"), traits=FRIENDLI)
async def stop_tokens(s: ProbeSession) -> None:
    """Greedy baseline with its token ids; then one of those ids as a stop token."""
    common = {"max_tokens": s.settings.max_tokens, "temperature": 0}
    base = await s.complete("baseline", s.body(PROMPT_A, **common))
    choice = first_choice(base)
    tokens = choice.get("tokens") if choice else None
    if not isinstance(tokens, list) or len(tokens) < 4:
        s.missing("stopped", "the baseline returned fewer than 4 token ids")
        return
    for k in range(2, len(tokens) - 1):
        if isinstance(tokens[k], int) and tokens[k] not in tokens[:k]:
            s.note("stop_token", tokens[k])
            s.note("position", k)
            body = s.body(PROMPT_A, **common, stop_tokens=[{"tokens": [tokens[k]]}])
            await s.complete("stopped", body)
            return
    s.missing("stopped", "no token id occurs first after position 2")
