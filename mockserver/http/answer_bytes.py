"""Rendering a large non-streamed answer one choice at a time, byte for byte the usual one.

Echo with logprobs on 150 prompts of 1,000 tokens is a 29 MB answer. Built as one dict tree
(hundreds of thousands of small dicts and floats) and then encoded, it peaks at several times
that and leaves the allocator's arenas fragmented: RSS stayed ~60 MB higher after one such
request. :func:`render_by_choice` builds and encodes one choice at a time instead, so only one
choice's objects live at once; the bytes are ``encode_json(completion_body(...))``'s (tested).
:func:`complete_rendered` goes further and renders each prompt's choices as they are generated.
Both join the encoded choices with ``sse.splice_choices``.
"""

from __future__ import annotations

import threading
from typing import cast

from reference_engine import Engine
from reference_engine.request import GenerationRequest
from reference_engine.results import Choice, Completion, Usage
from spec import JSON

from ..faults import ActiveFaults, FaultContext
from ..sse import encode_json, encode_json_by_choice, splice_choices
from ..wire import Identity, Wire, completion_body
from .cache import choice_units
from .engine_threads import checked
from .off_loop_thresholds import heavy_answer


def render_by_choice(completion: Completion, identity: Identity, *, wire: Wire,
                     suffix: str | None) -> bytes:
    """``encode_json(completion_body(completion, ...))``, one choice at a time."""
    parts = [_encoded_choice(choice, completion.usage, identity, wire=wire, suffix=suffix)
             for choice in completion.choices]
    return _spliced(parts, completion.usage, identity, wire=wire, suffix=suffix)


def render(completion: Completion, identity: Identity, *, wire: Wire, suffix: str | None,
           faults: ActiveFaults, ctx: FaultContext) -> bytes:
    """``completion``'s body through the ``payload`` faults; one choice at a time when it is
    heavy (``off_loop_thresholds.heavy_answer``) -- the caller then runs this on the engine's
    threads."""
    heavy = heavy_answer(completion)
    if heavy and not faults:
        return render_by_choice(completion, identity, wire=wire, suffix=suffix)
    body = completion_body(completion, identity, wire=wire, suffix=suffix)
    altered = faults.alter_payload(body, ctx)
    encode = encode_json_by_choice if heavy else encode_json
    return encode(body if altered is None else altered)


def complete_rendered(engine: Engine, generation: GenerationRequest, stop: threading.Event,
                      identity: Identity, *, wire: Wire, suffix: str | None,
                      keep_units: int = 0) -> tuple[bytes, Usage, Completion | None]:
    """``render_by_choice(engine.complete(...))``'s bytes, rendering each prompt's choices as
    soon as they are generated (``Engine.complete_prompts``): the whole :class:`Completion`
    (a million small objects for echo scoring) never exists at once.

    That peak is what the allocator keeps: pymalloc returns an arena only when it is wholly
    empty, and the few objects that outlive a request (the engine's caches) pin arenas the
    peak spread over, so RSS stayed ~70-130 MB above start after a 29 MB echo answer; and its
    last reference fell on the event loop, which freed it in one stall of ~100 ms.

    Returns the bytes, the usage and -- only while its choices' ``choice_units`` stay within
    ``keep_units`` -- the Completion itself for the result cache, else None. Raises
    ``Stopped`` between prompts once ``stop`` is set.
    """
    parts: list[bytes] = []
    kept: list[Choice] | None = []
    prompt_tokens = completion_tokens = size = 0
    for part in checked(engine.complete_prompts(generation), stop):
        prompt_tokens += part.usage.prompt_tokens
        for choice in part.choices:
            completion_tokens += choice.completion_tokens
            parts.append(_encoded_choice(choice, part.usage, identity, wire=wire,
                                         suffix=suffix))
            if kept is not None:
                size += choice_units(choice)
                kept = kept if size <= keep_units else None
                if kept is not None:
                    kept.append(choice)
        del part
    usage = Usage(prompt_tokens, completion_tokens)
    whole = Completion(tuple(kept), usage) if kept is not None else None
    return _spliced(parts, usage, identity, wire=wire, suffix=suffix), usage, whole


def _encoded_choice(choice: Choice, usage: Usage, identity: Identity, *, wire: Wire,
                    suffix: str | None) -> bytes:
    one = completion_body(Completion((choice,), usage), identity, wire=wire,
                          suffix=suffix)
    return encode_json(cast("list[JSON]", one["choices"])[0])


def _spliced(parts: list[bytes], usage: Usage, identity: Identity, *, wire: Wire,
             suffix: str | None) -> bytes:
    """The answer's head (everything but its choices) with ``parts`` as its choices."""
    head = encode_json(completion_body(Completion((), usage), identity, wire=wire,
                                       suffix=suffix))
    spliced = splice_choices(head, parts)
    if spliced is None:  # every completion body has a choices list
        raise RuntimeError("an answer head without a choices list")
    return spliced
