"""The ``logprobs`` object of a choice or chunk, from the engine's :class:`LogprobEntry` list.

Spec: ``LogprobsObject`` in ``spec/completions.yaml``: "The four arrays have one entry per
token, in order ... ``text_offset`` counts characters from the start of the prompt". The first
echoed prompt token has null ``token_logprobs`` / ``top_logprobs`` entries (a FIX there).
"""

from __future__ import annotations

from collections.abc import Sequence

from reference_engine.results import LogprobEntry, PromptLogprobs
from spec import JSON


def logprobs_object(entries: Sequence[LogprobEntry]) -> dict[str, JSON]:
    """``{tokens, token_logprobs, top_logprobs, text_offset}`` with one item per entry."""
    return {
        "tokens": [entry.token for entry in entries],
        "token_logprobs": [entry.logprob for entry in entries],
        "top_logprobs": [None if entry.top is None else dict(entry.top) for entry in entries],
        "text_offset": [entry.offset for entry in entries],
    }


def prompt_logprobs_list(positions: PromptLogprobs) -> list[JSON]:
    """vLLM's ``prompt_logprobs`` (``VllmPromptLogprobs``): per prompt token null (the first)
    or ``{"<id>": {"logprob", "rank", "decoded_token"}}``, the prompt token first."""
    return [
        None if ranked is None else {
            str(entry.token_id): {"logprob": entry.logprob, "rank": entry.rank,
                                  "decoded_token": entry.decoded}
            for entry in ranked
        }
        for ranked in positions
    ]


def usage_object(prompt_tokens: int, completion_tokens: int) -> dict[str, JSON]:
    """``{prompt_tokens, completion_tokens, total_tokens}`` (total is always the sum)."""
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
