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
