"""The generated tokens of a logprobs object, whichever of the two shapes servers answer.

OpenAI's completions return ``{"tokens": [...], "token_logprobs": [...], ...}``
(``LogprobsObject`` in ``spec/completions.yaml``); some servers answer completions in the chat
shape, ``{"content": [{"token", "logprob", "bytes", "top_logprobs"}]}``, which SCHEMA-001
fails. The tokens are there either way, and ``logit-bias`` needs only them.
"""

from __future__ import annotations

from spec import JSON


def generated_tokens(logprobs: JSON) -> list[str] | None:
    """The generated tokens' texts from a logprobs object in OpenAI's shape (``tokens``) or in
    the chat shape some servers answer completions with (``content: [{token, logprob}]``,
    which SCHEMA-001 judges): the id to bias is found either way."""
    if not isinstance(logprobs, dict):
        return None
    tokens = logprobs.get("tokens")
    if not isinstance(tokens, list):
        content = logprobs.get("content")
        tokens = [e.get("token") if isinstance(e, dict) else None
                  for e in content] if isinstance(content, list) else None
    if tokens and all(isinstance(t, str) for t in tokens):
        return [str(t) for t in tokens]
    return None
