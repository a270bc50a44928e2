"""The non-streamed response body, from the engine's :class:`Completion`.

Spec: ``CompletionResponse`` (OpenAI: ``id, object, created, model, system_fingerprint,
choices[{index, text, logprobs, finish_reason}], usage``) and ``FriendliCompletionResponse``
(``id, object, model, choices[{index, seed, text, tokens, logprobs?, finish_reason}], usage``;
"it has no ``created``") in ``spec/completions.yaml``. Keys come in the order of the
specification's examples. A choice of a request that used vLLM's extensions carries vLLM's
response fields after ``finish_reason``: ``stop_reason`` and ``prompt_logprobs``
(``VllmCompletionChoice``).
"""

from __future__ import annotations

import re

from reference_engine.results import Choice, Completion, VllmChoice
from spec import JSON

from ..sse import encode_json
from .formats import FRIENDLI_WIRE, Wire
from .identity import Identity
from .logprobs import logprobs_object, prompt_logprobs_list, usage_object

OBJECT = "text_completion"


def completion_body(
    completion: Completion, identity: Identity, *, wire: Wire, suffix: str | None = None
) -> dict[str, JSON]:
    """The JSON body for ``completion``; ``suffix`` (OpenAI) is appended to every choice's text.

    The contract: "The reference engine appends it to the completion's ``text`` verbatim; it is
    not part of logprobs, usage, or the streamed deltas before the finish chunk."
    """
    usage = usage_object(completion.usage.prompt_tokens, completion.usage.completion_tokens)
    if wire == FRIENDLI_WIRE:
        return {
            "id": identity.id,
            "object": OBJECT,
            "model": identity.model,
            "choices": [_friendli_choice(choice) for choice in completion.choices],
            "usage": usage,
        }
    body: dict[str, JSON] = {
        "id": identity.id,
        "object": OBJECT,
        "created": identity.created,
        "model": identity.model,
    }
    if identity.system_fingerprint is not None:
        body["system_fingerprint"] = identity.system_fingerprint
    body["choices"] = [_openai_choice(choice, suffix) for choice in completion.choices]
    body["usage"] = usage
    return body


def _openai_choice(choice: Choice, suffix: str | None) -> dict[str, JSON]:
    body: dict[str, JSON] = {
        "index": choice.index,
        "text": choice.text + (suffix or ""),
        "logprobs": None if choice.logprobs is None else logprobs_object(choice.logprobs),
        "finish_reason": choice.finish_reason,
    }
    if isinstance(choice, VllmChoice):
        body["stop_reason"] = choice.stop_reason
        body["prompt_logprobs"] = (None if choice.prompt_logprobs is None
                                   else prompt_logprobs_list(choice.prompt_logprobs))
    return body


def _friendli_choice(choice: Choice) -> dict[str, JSON]:
    body: dict[str, JSON] = {
        "index": choice.index,
        "seed": choice.seed,
        "text": choice.text,
        "tokens": list(choice.token_ids),
    }
    if choice.logprobs is not None:
        body["logprobs"] = logprobs_object(choice.logprobs)
    body["finish_reason"] = choice.finish_reason
    return body


def identity_prefix(identity: Identity, *, wire: Wire) -> bytes:
    """The first bytes of ``encode_json(completion_body(...))``: ``{"id":...,"object":...,``
    and, on OpenAI's route, ``"created":...,``. Everything after them does not depend on the
    identity's ``id`` and ``created`` (the mock's answer memo keeps only that tail)."""
    if _PLAIN_ID.fullmatch(identity.id) is None:  # never for Identity.new's ids
        head: dict[str, JSON] = {"id": identity.id, "object": OBJECT}
        if wire != FRIENDLI_WIRE:
            head["created"] = identity.created
        return encode_json(head)[:-1] + b","
    start = b'{"id":"' + identity.id.encode("ascii") + _AFTER_ID
    if wire == FRIENDLI_WIRE:
        return start
    return start + b'"created":' + str(int(identity.created)).encode("ascii") + b","


_PLAIN_ID = re.compile(r"[A-Za-z0-9_-]*")
_AFTER_ID = b'","object":"' + OBJECT.encode("ascii") + b'",'
