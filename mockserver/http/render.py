"""Rendering a large non-streamed answer one choice at a time, byte for byte the usual one.

Echo with logprobs on 150 prompts of 1,000 tokens is a 29 MB answer. Built as one dict tree
(hundreds of thousands of small dicts and floats) and then encoded, it peaks at several times
that and leaves the allocator's arenas fragmented: RSS stayed ~60 MB higher after one such
request. :func:`render_by_choice` builds and encodes one choice at a time instead, so only one
choice's objects live at once; the bytes are ``encode_json(completion_body(...))``'s (tested).
:func:`complete_rendered` goes further and renders each prompt's choices as they are generated.
"""

from __future__ import annotations

import threading
from typing import cast

from reference_engine import Engine
from reference_engine.request import GenerationRequest
from reference_engine.results import Choice, Completion, Usage
from spec import JSON

from ..sse import encode_json
from ..wire import Identity, completion_body
from . import work
from .cache import choice_units
from .offload import check

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


def complete_rendered(engine: Engine, generation: GenerationRequest, stop: threading.Event,
                      identity: Identity, *, profile: str, suffix: str | None,
                      keep_units: int = 0) -> tuple[bytes, Usage, Completion | None]:
    """``render_by_choice(work.complete(...))``'s bytes, rendering each prompt's choices as
    soon as they are generated: the whole :class:`Completion` (a million small objects for
    echo scoring) never exists at once.

    That peak is what the allocator keeps: pymalloc returns an arena only when it is wholly
    empty, and the few objects that outlive a request (the engine's caches) pin arenas the
    peak spread over, so RSS stayed ~70-130 MB above start after a 29 MB echo answer; and its
    last reference fell on the event loop, which freed it in one stall of ~100 ms.

    Returns the bytes, the usage and -- only while its choices' ``choice_units`` stay within
    ``keep_units`` -- the Completion itself for the result cache, else None.
    """
    seed = generation.seed
    if seed is None and len(generation.prompts) > 1:  # one seed per candidate, as the engine
        seed = work.shared_seeds(generation)
    parts: list[bytes] = []
    kept: list[Choice] | None = []
    prompt_tokens = completion_tokens = size = 0
    for p, prompt in enumerate(generation.prompts):
        check(stop)
        part = work.complete_one(engine, generation, p, prompt, seed)
        prompt_tokens += part.usage.prompt_tokens
        for choice in part.choices:
            completion_tokens += choice.completion_tokens
            one = completion_body(Completion((choice,), part.usage), identity,
                                  profile=profile, suffix=suffix)
            parts.append(encode_json(cast("list[JSON]", one["choices"])[0]))
            if kept is not None:
                size += choice_units(choice)
                kept = kept if size <= keep_units else None
                if kept is not None:
                    kept.append(choice)
        del part
    usage = Usage(prompt_tokens, completion_tokens)
    empty = Completion((), usage)
    head = encode_json(completion_body(empty, identity, profile=profile, suffix=suffix))
    cut = head.index(CHOICES_KEY + b"]") + len(CHOICES_KEY)
    whole = Completion(tuple(kept), usage) if kept is not None else None
    return head[:cut] + b",".join(parts) + head[cut:], usage, whole

