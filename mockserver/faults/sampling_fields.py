"""Faults that accept a sampling field and ignore it: penalties, top_k, min_p, bans, forced
tokens, logit_bias, min_tokens, n-gram blocking.

A sampling field is one that changes which token is picked (the engine's ``SamplingParams``).
Each fault hands the engine the body without the field (a ``body`` hook, never the engine
itself), so a server that ignores the field is what the harness sees. The other ignored fields
(stop, stop tokens, best_of, response_format) and :class:`FieldsIgnored` itself are in
``parameters.py``. Spec: ``PresencePenalty`` / ``FrequencyPenalty``, ``logit_bias``,
``min_tokens`` and ``FriendliCompletionRequest``'s ``top_k``, ``min_p``,
``repetition_penalty``, ``no_repeat_ngram``, ``bad_words`` / ``bad_word_tokens`` and
``forced_output_tokens`` in ``spec/completions.yaml``.
"""

from __future__ import annotations

from .base import FRIENDLI, OPENAI
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


@register
class LogitBiasIgnored(FieldsIgnored):
    name = "logit-bias-ignored"
    description = "`logit_bias` is accepted and ignored."
    breaks = "logit_bias -100 bans a token and +100 forces it."
    wires = OPENAI
    ignored = ("logit_bias",)


@register
class MinTokensIgnored(FieldsIgnored):
    name = "min-tokens-ignored"
    description = "`min_tokens` (FriendliAI, vLLM) and `min_total_tokens` are accepted and ignored."
    breaks = "Generation does not end before min_tokens (or min_total_tokens) are reached."
    wires = FRIENDLI | OPENAI
    ignored = ("min_tokens", "min_total_tokens")


@register
class NoRepeatNgramIgnored(FieldsIgnored):
    name = "no-repeat-ngram-ignored"
    description = "FriendliAI's `no_repeat_ngram` is accepted and ignored."
    breaks = "With no_repeat_ngram N, no N-gram of token ids occurs twice."
    wires = FRIENDLI
    ignored = ("no_repeat_ngram",)


@register
class RepetitionPenaltyIgnored(FieldsIgnored):
    name = "repetition-penalty-ignored"
    description = "`repetition_penalty` is accepted and ignored."
    breaks = "A repetition penalty lowers the score of tokens that already occurred."
    wires = FRIENDLI
    ignored = ("repetition_penalty",)


@register
class MinPIgnored(FieldsIgnored):
    name = "min-p-ignored"
    description = "`min_p` is accepted and ignored."
    breaks = "min_p drops tokens less likely than min_p times the most likely one."
    wires = FRIENDLI
    ignored = ("min_p",)
