"""Faults that accept a field and ignore it: the engine is handed the body without the field
(a ``body`` hook, never the engine itself), so a server that ignores it is what the harness sees.

The sampling fields (those that change which token is picked: the engine's ``SamplingParams``)
come first: penalties, top_k, min_p, bans, forced tokens, logit_bias, min_tokens, n-gram
blocking; then the fields that end or choose an answer (stop, stop tokens, best_of,
response_format). Faults that misread a field instead (a seed, max_tokens, echo) are in
``parameters.py``. Spec: ``PresencePenalty`` / ``FrequencyPenalty``, ``logit_bias``,
``min_tokens``, ``stop``, ``best_of`` and ``FriendliCompletionRequest``'s ``top_k``, ``min_p``,
``repetition_penalty``, ``no_repeat_ngram``, ``bad_words`` / ``bad_word_tokens``,
``forced_output_tokens``, ``stop_tokens`` and ``response_format`` in ``spec/completions.yaml``.
"""

from __future__ import annotations

from typing import ClassVar

from spec import JSON

from .base import FRIENDLI, OPENAI, Fault, FaultContext
from .registry import register

Body = dict[str, JSON]


class FieldsIgnored(Fault):
    """A field accepted and then ignored: the engine is handed the body without it."""

    hook = "body"
    ignored: ClassVar[tuple[str, ...]] = ()

    def alter_body(self, body: Body, ctx: FaultContext) -> Body:
        for name in self.ignored:
            body.pop(name, None)
        return body


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


@register
class StopIgnored(FieldsIgnored):
    name = "stop-ignored"
    description = "Stop strings are not honoured: generation continues past them."
    breaks = "Generation ends at the first stop string, which the text does not contain."
    ignored = ("stop",)


@register
class StopTokensIgnored(FieldsIgnored):
    name = "stop-tokens-ignored"
    description = "FriendliAI `stop_tokens` are accepted and ignored: generation runs past them."
    breaks = "FriendliAI: a generated stop token ends generation, with finish_reason stop."
    wires = FRIENDLI
    ignored = ("stop_tokens",)


@register
class BestOfIgnored(FieldsIgnored):
    name = "best-of-ignored"
    description = "`best_of` is accepted and ignored: the first n candidates are returned."
    breaks = "best_of > n returns the n best of best_of candidates (by mean logprob)."
    wires = OPENAI
    ignored = ("best_of",)


@register
class ResponseFormatIgnored(FieldsIgnored):
    name = "response-format-ignored"
    description = "FriendliAI's `response_format` is accepted and ignored: the output is free text."
    breaks = ("json_object output is one JSON object, json_schema output validates, regex "
              "output matches the pattern.")
    wires = FRIENDLI
    ignored = ("response_format",)
