"""``extra-fields``: vLLM's own fields beside the spec's, on every choice (streamed or not).

Spec: ``spec/completions.yaml`` lets a server add fields a client does not know; vLLM's
``CompletionResponseChoice`` and ``CompletionResponseStreamChoice`` carry ``stop_reason`` (the
stop string or token that ended the choice, else null), ``prompt_logprobs``,
``prompt_token_ids`` and ``token_ids`` (null unless asked for). A field the answer already
has keeps its value (``mockserver --profile vllm`` gives a real ``stop_reason`` and
``prompt_logprobs``): vLLM never nulls them.
"""

from __future__ import annotations

from collections.abc import Iterator

from spec import JSON

from .base import StreamContext, Variant
from .registry import register

EXTRA_CHOICE_FIELDS: dict[str, JSON] = {
    "stop_reason": None,
    "prompt_logprobs": None,
    "prompt_token_ids": None,
    "token_ids": None,
}


def _with_extras(choices: JSON) -> JSON:
    if not isinstance(choices, list):
        return choices
    return [{**EXTRA_CHOICE_FIELDS, **choice} if isinstance(choice, dict) else choice
            for choice in choices]


@register
class ExtraFields(Variant):
    name = "extra-fields"
    imitates = "vLLM (`stop_reason`, `prompt_logprobs`, `prompt_token_ids`, `token_ids`)"
    description = "every choice also carries vLLM's extra fields, null"

    def alter_chunks(self, chunks: Iterator[dict[str, JSON]],
                     ctx: StreamContext) -> Iterator[dict[str, JSON]]:
        for chunk in chunks:
            yield {**chunk, "choices": _with_extras(chunk.get("choices"))}

    def alter_body(self, body: dict[str, JSON]) -> dict[str, JSON]:
        return {**body, "choices": _with_extras(body.get("choices"))}


def _uncounted(usage: JSON) -> JSON:
    """``usage`` without ``completion_tokens`` when it is 0."""
    if isinstance(usage, dict) and usage.get("completion_tokens") == 0:
        return {key: value for key, value in usage.items() if key != "completion_tokens"}
    return usage


@register
class CompletionTokensAbsentWhenZero(Variant):
    name = "completion-tokens-absent-when-zero"
    imitates = ("OpenAI (an answer that generated nothing has usage "
                "`{prompt_tokens, total_tokens}`, no `completion_tokens`)")
    description = "usage leaves completion_tokens out wherever it is 0 (streamed or not)"

    # Recorded 2023-04-11 and 2025-08-07, both an immediate stop:
    # https://github.com/DataDog/dd-trace-py/blob/f095bfc972fbff40ad12555c08e4f49949140345/tests/contrib/openai/cassettes/completion.yaml
    # https://github.com/DataDog/dd-trace-py/blob/b5a885068620f928d73b3b40ca4c27f56296ef3f/tests/llmobs/llmobs_cassettes/openai/openai_completions_post_2dbdd8b1.yaml

    def alter_chunks(self, chunks: Iterator[dict[str, JSON]],
                     ctx: StreamContext) -> Iterator[dict[str, JSON]]:
        for chunk in chunks:
            yield {**chunk, "usage": _uncounted(chunk["usage"])} if "usage" in chunk else chunk

    def alter_body(self, body: dict[str, JSON]) -> dict[str, JSON]:
        return {**body, "usage": _uncounted(body["usage"])} if "usage" in body else body
