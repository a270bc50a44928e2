"""Sampling fields whose effect shows on any model: penalties, top_k, banned words, forced tokens.

Spec: ``CompletionRequest`` / ``FriendliCompletionRequest`` in ``spec/completions.yaml``:
``presence_penalty`` / ``frequency_penalty`` (OpenAI: "Positive values penalize new tokens based
on whether they appear in the text so far" / "based on their existing frequency"), and
FriendliAI's ``top_k`` ("The number of highest probability tokens to keep for sampling"),
``bad_words`` / ``bad_word_tokens`` ("Text phrases that should not be generated" / their token
form) and ``forced_output_tokens`` ("A token sequence that is enforced as a generation output").

Every request is greedy, or seeded where it samples, so a server that honours the field answers
the same way every time:

* ``penalties``: the greedy answer of :data:`LOOPING_PROMPT` (which repeats tokens within
  :data:`MAX_TOKENS`) with logprobs, and the same request with each penalty at its largest,
  2.0 (both wires; three requests);
* ``top-k``, ``bad-words``, ``forced-output`` (FriendliAI): beside the greedy baselines of
  :mod:`conformance.probes.samplers_huggingface`, whose token ids name what is banned or forced.

``xtc_threshold`` / ``xtc_probability`` have no probe: XTC removes the most likely tokens only
when a draw says so and only where two pass the threshold, so what it must change depends on the
model's probabilities at each step, which a probe cannot read from a greedy answer.
"""

from __future__ import annotations

import re

from spec import JSON

from .friendli import FRIENDLI
from .model import ProbeSession, first_choice
from .prompts import SAMPLING_TEMPERATURE, SEED
from .registry import probe
from .repeats import repeating_greedy
from .samplers_huggingface import BASELINES, LOOPING_PROMPT, MAX_TOKENS

PENALTY = 2.0
"""The largest penalty OpenAI's range (-2.0 to 2.0) allows: a repeated token loses 2 logits."""
BANNED_WORDS = 1
"""How many tokens of the greedy answer are banned or forced."""
FORCED_TOKENS = 2


def _greedy(**fields: JSON) -> dict[str, JSON]:
    return {"prompt": LOOPING_PROMPT, "max_tokens": MAX_TOKENS, "temperature": 0, **fields}


@probe("penalties",
       f"presence_penalty and frequency_penalty {PENALTY} on a repeating greedy answer",
       features=("penalties", "logprobs"))
async def penalties(s: ProbeSession) -> None:
    """A greedy answer that repeats one of its tokens, and the same request with
    ``presence_penalty`` and with ``frequency_penalty`` at :data:`PENALTY`.

    :func:`repeating_greedy` finds the greedy answer; its key is noted as ``repeating`` (what
    was tried as ``tried``), or why none was found as ``unrepeated``, and then the penalized
    requests are not sent."""
    found = await repeating_greedy(s)
    s.note("tried", list(found.tried))
    if found.key is None or found.body is None:
        s.note("unrepeated", found.reason)
        s.missing("presence", found.reason)
        s.missing("frequency", found.reason)
        return
    s.note("repeating", found.key)
    fields = {k: v for k, v in found.body.items() if k not in ("model", "logprobs")}
    await s.gather(
        s.complete("presence", s.body(**fields, presence_penalty=PENALTY)),
        s.complete("frequency", s.body(**fields, frequency_penalty=PENALTY)),
    )


def baseline_tokens(s: ProbeSession, key: str) -> list[int] | None:
    """The generated token ids of a FriendliAI greedy baseline, when it answered with them."""
    exchange = s.earlier(BASELINES).exchanges.get(key)
    choice = first_choice(exchange) if exchange is not None else None
    tokens = choice.get("tokens") if choice else None
    if isinstance(tokens, list) and tokens and all(
            isinstance(t, int) and not isinstance(t, bool) for t in tokens):
        return tokens
    return None


@probe("top-k", f"top_k 1 at temperature {SAMPLING_TEMPERATURE}, seeded", features=("top_k",),
       traits=FRIENDLI, needs=(BASELINES,))
async def top_k(s: ProbeSession) -> None:
    await s.complete("sampled", s.body(**_greedy(top_k=1, temperature=SAMPLING_TEMPERATURE,
                                                 seed=SEED)))


@probe("bad-words", "the greedy answer's first token and word banned", features=("bad_words",),
       traits=FRIENDLI, needs=(BASELINES,))
async def bad_words(s: ProbeSession) -> None:
    """The looping baseline's first token banned by id, and its first word banned as text."""
    tokens = baseline_tokens(s, "looping")
    exchange = s.earlier(BASELINES).exchanges.get("looping")
    choice = first_choice(exchange) if exchange is not None else None
    text = choice.get("text") if choice else None
    steps = []
    if tokens is None:
        s.missing("tokens", "the looping baseline returned no token ids (FRIENDLI-006)")
    else:
        banned = tokens[:BANNED_WORDS]
        s.note("tokens", banned)
        steps.append(s.complete("tokens", s.body(**_greedy(
            bad_word_tokens=[{"tokens": banned}]))))
    word = first_word(text) if isinstance(text, str) else None
    if word is None:
        s.missing("words", "the looping baseline has no word to ban")
    else:
        s.note("word", word)
        steps.append(s.complete("words", s.body(**_greedy(bad_words=[word]))))
    await s.gather(*steps)


def first_word(text: str) -> str | None:
    """The first word of ``text`` with one space before it when it has one (``" def"``)."""
    found = re.search(r" ?[^\s]+", text)
    return found.group(0) if found else None


@probe("forced-output", f"{FORCED_TOKENS} tokens of another answer forced",
       features=("forced_output_tokens", "choice_tokens"), traits=FRIENDLI, needs=(BASELINES,))
async def forced_output(s: ProbeSession) -> None:
    """The looping prompt forced to start as the ending prompt's greedy answer does."""
    tokens = baseline_tokens(s, "ending")
    if tokens is None:
        s.missing("forced", "the ending baseline returned no token ids (FRIENDLI-006)")
        return
    forced = tokens[:FORCED_TOKENS]
    s.note("forced", forced)
    await s.complete("forced", s.body(**_greedy(forced_output_tokens=forced)))
