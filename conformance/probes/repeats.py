"""Find a greedy answer that repeats one of its tokens, for the penalties to act on.

``presence_penalty`` and ``frequency_penalty`` lower the logits of tokens already generated
(``PresencePenalty`` / ``FrequencyPenalty`` in ``spec/completions.yaml``): they change a greedy
answer only where it would repeat a token. Whether a model repeats one within
:data:`~conformance.probes.samplers_huggingface.MAX_TOKENS` tokens of :data:`LOOPING_PROMPT`
depends on the model (the lab's tiny model answers one 12-token sentence), so when it does not,
the same prompt is tried for :data:`LONGER` times ``--max-tokens``, then :data:`PHRASE_PROMPT`,
a phrase repeated, which invites the model to repeat it too. Every try is one request of the
run's budget; the ones after the first are auxiliary (they look for an answer to judge, they are
not judged).

A repeat is read from the answer's logprobs tokens or, when they name none (llama.cpp's server
answers ``logprobs: 0`` with no logprobs object), from the ids the server's tokenizer endpoint
gives its text (:func:`~conformance.probes.token_ids.generated_ids`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from conformance.transport import Exchange
from spec import JSON

from .logprob_tokens import generated_tokens
from .model import ProbeSession, first_choice
from .samplers_huggingface import LOOPING_PROMPT, MAX_TOKENS
from .token_ids import generated_ids

LONGER = 4
"""The longer tries ask for this many times ``--max-tokens``."""
PHRASE = "one two three four"
PHRASE_PROMPT = ", ".join([PHRASE] * 4) + ","
"""A phrase said four times: a model continues it by saying it again."""


@dataclass(frozen=True)
class Found:
    """The key and body of the greedy answer that repeats a token (None: none did), what was
    tried, and why none was found."""

    key: str | None
    body: dict[str, JSON] | None
    tried: tuple[str, ...]
    reason: str = ""


@dataclass(frozen=True)
class Try:
    key: str
    prompt: str
    max_tokens: int
    shown: str


def tries(s: ProbeSession) -> tuple[Try, ...]:
    longer = LONGER * s.settings.max_tokens
    return (
        Try("greedy", LOOPING_PROMPT, MAX_TOKENS, f"{MAX_TOKENS} tokens of {LOOPING_PROMPT!r}"),
        Try("greedy-longer", LOOPING_PROMPT, longer, f"{longer} tokens of {LOOPING_PROMPT!r}"),
        Try("greedy-phrase", PHRASE_PROMPT, longer,
            f"{longer} tokens of a phrase said four times"),
    )


async def repeating_greedy(s: ProbeSession) -> Found:
    """The first of :func:`tries` whose greedy answer repeats one of its tokens."""
    tried: list[str] = []
    for index, step in enumerate(tries(s)):
        body = s.body(step.prompt, max_tokens=step.max_tokens, temperature=0, logprobs=0)
        if index == 0:
            exchange = await s.complete(step.key, body)
        else:
            exchange = await s.post_auxiliary(step.key, s.settings.url("completions"), body)
        tokens, why = await _tokens(s, step.key, step.prompt, exchange)
        if tokens is None:
            if index == 0:  # the first answer's defect is judged: say so and stop
                return Found(None, None, (step.shown,), why)
            tried.append(f"{step.shown} ({why})")
            continue
        if _repeats(tokens):
            return Found(step.key, body, (*tried, step.shown))
        tried.append(f"{step.shown} (no token repeated)")
    return Found(None, None, tuple(tried),
                 "no greedy answer repeats one of its tokens: tried " + "; ".join(tried))


def _repeats(tokens: Sequence[object]) -> bool:
    return len(set(tokens)) < len(tokens)


async def _tokens(
    s: ProbeSession, key: str, prompt: str, exchange: Exchange
) -> tuple[Sequence[object] | None, str]:
    """The generated tokens of an answer (texts from its logprobs, else ids from its text
    through the tokenizer endpoint), or None and why."""
    choice = first_choice(exchange)
    if choice is None:
        return None, f"penalties/{key} gave no choice (HTTP {exchange.status})"
    tokens = generated_tokens(choice.get("logprobs"))
    if tokens:
        return tokens, ""
    text = choice.get("text")
    if not isinstance(text, str) or not text:
        return None, f"penalties/{key} has no text"
    found = await generated_ids(s, prompt, text, label=key)
    if found.ids is None:
        judge = "SCHEMA-001" if isinstance(choice.get("logprobs"), dict) else "LOGPROBS-002"
        return None, (f"penalties/{key} has no logprobs tokens (judged by {judge}) and the "
                      f"tokenizer endpoints gave no ids: {found.reason}")
    return found.ids, ""
