"""Faults in vLLM's extensions: a field accepted and ignored, or a response field gone wrong.

Spec: ``VllmCompletionRequest`` and ``VllmCompletionChoice`` in ``spec/completions.yaml``,
from vLLM's "Extra parameters" of the Completions API and ``SamplingParams``
(https://docs.vllm.ai/en/latest/api/vllm/sampling_params.html): ``ignore_eos``,
``stop_token_ids``, ``include_stop_str_in_output``, ``return_tokens_as_token_ids``, and the
response's ``stop_reason`` and ``prompt_logprobs``. Each breaks one of the rules EXT-002 to
EXT-008 (``conformance/rules/extensions.py``) and no other. An ignored field is set to its
default rather than dropped: the body still asked for vLLM's extensions, so the answer still
carries vLLM's response fields.
"""

from __future__ import annotations

from typing import ClassVar

from spec import JSON

from .base import OPENAI, Fault, FaultContext
from .registry import register
from .shapes import choices

Payload = dict[str, JSON]


class _ExtensionIgnored(Fault):
    """A vLLM field accepted and answered as if it held its default."""

    hook = "body"
    wires = OPENAI
    field: ClassVar[str]
    default: ClassVar[JSON]

    def alter_body(self, body: Payload, ctx: FaultContext) -> Payload:
        if body.get(self.field) is not None:
            body[self.field] = self.default
        return body


@register
class IgnoreEosIgnored(_ExtensionIgnored):
    name = "ignore-eos-ignored"
    description = "`ignore_eos` is accepted and ignored: the end-of-sequence token still ends."
    breaks = "With ignore_eos the choice runs to max_tokens (EXT-002)."
    field, default = "ignore_eos", False


@register
class StopTokenIdsIgnored(_ExtensionIgnored):
    name = "stop-token-ids-ignored"
    description = "`stop_token_ids` is accepted and ignored: generation runs past the stop token."
    breaks = "stop_token_ids end generation at the token (EXT-003)."
    field, default = "stop_token_ids", []


@register
class StopStringLeftOut(_ExtensionIgnored):
    name = "stop-string-left-out"
    description = "`include_stop_str_in_output` is ignored: the matched stop string is cut off."
    breaks = "include_stop_str_in_output keeps the stop string in the text (EXT-005)."
    field, default = "include_stop_str_in_output", False


@register
class TokensNamedByText(_ExtensionIgnored):
    name = "tokens-named-by-text"
    description = "`return_tokens_as_token_ids` is ignored: logprobs name tokens by their text."
    breaks = "return_tokens_as_token_ids names every logprobs token token_id:N (EXT-006)."
    field, default = "return_tokens_as_token_ids", False


class _ChoiceFault(Fault):
    hook = "payload"
    wires = OPENAI


@register
class StopReasonNull(_ChoiceFault):
    name = "stop-reason-null"
    description = "`stop_reason` is always null, even when a stop string or stop token ended."
    breaks = "stop_reason names the stop string or token id that ended the choice (EXT-004)."

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        for choice in choices(payload):
            if "stop_reason" in choice:
                choice["stop_reason"] = None
        return payload


@register
class PromptLogprobsKeyedByText(_ChoiceFault):
    name = "prompt-logprobs-keyed-by-text"
    description = "`prompt_logprobs` entries are keyed by the token's text, not its id."
    breaks = "prompt_logprobs map token ids to {logprob, rank, decoded_token} (EXT-007)."

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        for choice in choices(payload):
            entries = choice.get("prompt_logprobs")
            if isinstance(entries, list):
                choice["prompt_logprobs"] = [_keyed_by_text(entry) for entry in entries]
        return payload


def _keyed_by_text(entry: JSON) -> JSON:
    if not isinstance(entry, dict):
        return entry
    return {f"{value.get('decoded_token')}" if isinstance(value, dict) else key: value
            for key, value in entry.items()}


@register
class PromptLogprobsLastMissing(_ChoiceFault):
    name = "prompt-logprobs-last-missing"
    description = "`prompt_logprobs` leaves the last prompt token out (one entry short)."
    breaks = "prompt_logprobs has one entry per prompt token (EXT-008)."

    def alter_payload(self, payload: Payload, ctx: FaultContext) -> Payload:
        for choice in choices(payload):
            entries = choice.get("prompt_logprobs")
            if isinstance(entries, list) and entries:
                choice["prompt_logprobs"] = entries[:-1]
        return payload
