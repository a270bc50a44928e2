"""Rendering a large non-streamed answer one choice at a time, byte for byte the usual one.

Echo with logprobs on 150 prompts of 1,000 tokens is a 29 MB answer. Built as one dict tree
(hundreds of thousands of small dicts and floats) and then encoded, it peaks at several times
that and leaves the allocator's arenas fragmented: RSS stayed ~60 MB higher after one such
request. :func:`render_by_choice` builds and encodes one choice at a time instead, so only one
choice's objects live at once; the bytes are ``encode_json(completion_body(...))``'s (tested).
"""

from __future__ import annotations

from typing import cast

from reference_engine.results import Completion
from spec import JSON

from ..sse import encode_json
from ..wire import Identity, completion_body

CHOICES_KEY = b'"choices":['


def render_by_choice(completion: Completion, identity: Identity, *, profile: str,
                     suffix: str | None) -> bytes:
    """``encode_json(completion_body(completion, ...))``, one choice at a time.

    Inside string values every quote is escaped, so the only ``"choices":[]`` in the encoded
    head (the answer without its choices) is the key itself.
    """
    empty = Completion((), completion.usage)
    head = encode_json(completion_body(empty, identity, profile=profile, suffix=suffix))
    cut = head.index(CHOICES_KEY + b"]") + len(CHOICES_KEY)
    parts = []
    for choice in completion.choices:
        one = completion_body(Completion((choice,), completion.usage), identity,
                              profile=profile, suffix=suffix)
        parts.append(encode_json(cast("list[JSON]", one["choices"])[0]))
    return head[:cut] + b",".join(parts) + head[cut:]
