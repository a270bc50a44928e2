"""Faults that accept a sampling field and ignore it: penalties, top_k, bans, forced tokens.

Each hands the engine the body without the field (a ``body`` hook, never the engine itself), so
a server that ignores the field is what the harness sees. Spec: ``PresencePenalty`` /
``FrequencyPenalty`` and ``FriendliCompletionRequest``'s ``top_k``, ``bad_words`` /
``bad_word_tokens`` and ``forced_output_tokens`` in ``spec/completions.yaml``.
"""

from __future__ import annotations

from typing import ClassVar

from spec import JSON

from .base import FRIENDLI, Fault, FaultContext
from .registry import register

Body = dict[str, JSON]


class _Ignored(Fault):
    """The fields are accepted, then dropped before the engine sees the request."""

    hook = "body"
    ignored: ClassVar[tuple[str, ...]] = ()

    def alter_body(self, body: Body, ctx: FaultContext) -> Body:
        for name in self.ignored:
            body.pop(name, None)
        return body


@register
class PenaltiesIgnored(_Ignored):
    name = "penalties-ignored"
    description = "`presence_penalty` and `frequency_penalty` are accepted and ignored."
    breaks = "A presence or frequency penalty lowers the score of tokens already generated."
    ignored = ("presence_penalty", "frequency_penalty")


@register
class TopKIgnored(_Ignored):
    name = "top-k-ignored"
    description = "FriendliAI's `top_k` is accepted and ignored."
    breaks = "top_k N samples from the N most likely tokens only (top_k 1 is greedy)."
    profiles = FRIENDLI
    ignored = ("top_k",)


@register
class BadWordsIgnored(_Ignored):
    name = "bad-words-ignored"
    description = "FriendliAI's `bad_words` and `bad_word_tokens` are accepted and ignored."
    breaks = "Banned phrases and token sequences are never generated."
    profiles = FRIENDLI
    ignored = ("bad_words", "bad_word_tokens")


@register
class ForcedOutputIgnored(_Ignored):
    name = "forced-output-ignored"
    description = "FriendliAI's `forced_output_tokens` are accepted and ignored."
    breaks = "The output begins with the forced tokens."
    profiles = FRIENDLI
    ignored = ("forced_output_tokens",)
