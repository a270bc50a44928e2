"""The prompt's size in characters, bounded before anything tokenizes it (``--max-prompt-chars``).

The engine bounds a prompt by tokens (its 2,048-token context), but it has to tokenize the
prompt to count them, and tokenizing 1,000,000 characters takes seconds of CPU only to refuse
the request. A prompt string longer than ``--max-prompt-chars`` (default 100,000: more than any
prompt that fits the context, short of tokens averaging 48 characters) is therefore refused
with the route's invalid-request status, ``param: prompt``, before the engine sees it. The
limit is per prompt string (a list of prompts is bounded in total by ``--max-body-bytes``);
token-id prompts are bounded by the context alone, which costs nothing to check.
"""

from __future__ import annotations

from collections.abc import Mapping

from spec import JSON

from ..validation import RequestValidator

PROMPT_FIELDS = ("prompt", "tokens")


def check_prompt_chars(body: Mapping[str, JSON], limit: int, checker: RequestValidator) -> None:
    """Raise ``checker``'s invalid-request :class:`ApiError` for a prompt string over ``limit``."""
    for field in PROMPT_FIELDS:
        value = body.get(field)
        prompts = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        for index, prompt in enumerate(prompts):
            if isinstance(prompt, str) and len(prompt) > limit:
                where = field if isinstance(value, str) else f"{field}[{index}]"
                raise checker.error(
                    f"{where} has {len(prompt)} characters; prompts are limited to {limit} "
                    "characters (start the mock with a larger --max-prompt-chars).",
                    param=field, code="prompt_too_long")
