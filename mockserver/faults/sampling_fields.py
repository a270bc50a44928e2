"""Faults that accept a sampling field and ignore it: penalties, top_k, bans, forced tokens.

Each hands the engine the body without the field (a ``body`` hook, never the engine itself), so
a server that ignores the field is what the harness sees. Spec: ``PresencePenalty`` /
``FrequencyPenalty`` and ``FriendliCompletionRequest``'s ``top_k``, ``bad_words`` /
``bad_word_tokens`` and ``forced_output_tokens`` in ``spec/completions.yaml``.
"""

from __future__ import annotations

from .base import FRIENDLI
from .parameters import FieldsIgnored
from .registry import register


@register
class PenaltiesIgnored(FieldsIgnored):
    name = "penalties-ignored"
    description = "`presence_penalty` and `frequency_penalty` are accepted and ignored."
    breaks = "A presence or frequency penalty lowers the score of tokens already generated."
    ignored = ("presence_penalty", "frequency_penalty")


@register
class TopKIgnored(FieldsIgnored):
    name = "top-k-ignored"
    description = "FriendliAI's `top_k` is accepted and ignored."
    breaks = "top_k N samples from the N most likely tokens only (top_k 1 is greedy)."
    wires = FRIENDLI
    ignored = ("top_k",)


@register
class BadWordsIgnored(FieldsIgnored):
    name = "bad-words-ignored"
    description = "FriendliAI's `bad_words` and `bad_word_tokens` are accepted and ignored."
    breaks = "Banned phrases and token sequences are never generated."
    wires = FRIENDLI
    ignored = ("bad_words", "bad_word_tokens")


@register
class ForcedOutputIgnored(FieldsIgnored):
    name = "forced-output-ignored"
    description = "FriendliAI's `forced_output_tokens` are accepted and ignored."
    breaks = "The output begins with the forced tokens."
    wires = FRIENDLI
    ignored = ("forced_output_tokens",)
