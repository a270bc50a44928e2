"""From a request body to the engine's :class:`GenerationRequest`, for both wire formats.

Spec: ``CompletionRequest`` (``POST /v1/completions``) and ``FriendliCompletionRequest``
(``POST /dedicated/v1/completions``) in ``spec/completions.yaml``. The mock validates a body
against those schemas and the cross-field rules first (``mockserver.validation``); this module
only converts wire forms into domain values: a bare ``stop`` string becomes a tuple, ``null``
becomes the default, OpenAI's ``max_tokens`` defaults to 16 while FriendliAI's runs to the end
of the context, ``stop_tokens: [{"tokens": [...]}]`` becomes id tuples. vLLM's extensions
(``ignore_eos``, ``stop_token_ids``, ``include_stop_str_in_output``, ``prompt_logprobs``,
``return_tokens_as_token_ids``, ``allowed_token_ids``, ``truncate_prompt_tokens``) become the
engine's fields of the same meaning; a body that uses any field only vLLM's contract accepts
asks for vLLM's response fields too. It still checks every type it relies on, so a caller that
skipped validation gets an :class:`InvalidRequestError` naming the field, never a
``TypeError``.

Fields that change the wire and not the generation (``stream``, ``stream_options``, ``suffix``,
``user``) are read by the renderers and handlers, not here.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from reference_engine.errors import InvalidRequestError, UnsupportedParameterError
from reference_engine.request import GenerationRequest, PromptInput
from reference_engine.sampling import InvalidParameter, SamplingParams
from reference_engine.sampling.params import RESPONSE_FORMAT_TYPES
from spec import JSON

from .formats import FRIENDLI_WIRE, OPENAI_WIRE, WIRES, Wire

OPENAI_DEFAULT_MAX_TOKENS = 16
OPENAI_SAMPLING_FIELDS = (
    "temperature", "top_p", "presence_penalty", "frequency_penalty", "logit_bias",
    "top_k", "min_p", "repetition_penalty", "min_tokens", "allowed_token_ids",
)
FRIENDLI_SAMPLING_FIELDS = (
    "temperature", "top_p", "top_k", "min_p", "presence_penalty", "frequency_penalty",
    "repetition_penalty", "no_repeat_ngram", "bad_word_tokens", "min_tokens",
    "xtc_threshold", "xtc_probability", "response_format",
)
SMALLEST_TOP_P = sys.float_info.min
"""OpenAI allows ``top_p: 0``; the engine's nucleus filter needs a positive mass. The smallest
positive float keeps exactly the most likely token, which is what 0 means."""


def default_max_tokens(wire: Wire) -> int | None:
    """``max_tokens`` of a body that leaves it out: OpenAI's 16, or None (FriendliAI: until
    the context is full)."""
    return OPENAI_DEFAULT_MAX_TOKENS if wire == OPENAI_WIRE else None


def served_model(model: str, *, wire: Wire) -> str:
    """The model a request names: FriendliAI may address an adapter as ``MODEL:ADAPTER_ROUTE``
    (the model is the part before the colon); OpenAI's model is the whole string."""
    return model.split(":", 1)[0] if wire == FRIENDLI_WIRE else model


def integral_numbers(value: JSON) -> JSON:
    """``value`` with integral floats made ints (JSON Schema: ``3.0`` *is* an integer).

    A body may say ``"n": 2.0`` or ``"prompt": [464.0]``; ``RequestValidator.validate`` runs
    this on every valid body, so everything downstream (faults, the engine, usage arithmetic)
    sees plain ints.
    """
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [integral_numbers(item) for item in value]
    if isinstance(value, dict):
        return {key: integral_numbers(item) for key, item in value.items()}
    return value


def build_request(body: Mapping[str, JSON], *, wire: Wire) -> GenerationRequest:
    """The engine request for a body of a completions route of ``wire``, as
    ``RequestValidator.validate`` returns it (integral floats already ints: an ``n`` of
    ``2.0`` here is refused like any other non-integer, naming ``n``).

    ``wire`` is ``openai`` or ``friendli`` (``formats.wire_of`` gives a profile's); ValueError
    for any other. Raises
    :class:`InvalidRequestError` (``.param`` names the field) for a value the engine cannot
    take, and :class:`UnsupportedParameterError` for FriendliAI fields the reference model
    cannot honour (encoder-decoder knobs other than 1, embedding replacement).
    """
    if not isinstance(body, Mapping):
        raise InvalidRequestError("the request body must be a JSON object", param=None)
    if wire not in WIRES:
        raise ValueError(f"unknown wire {wire!r}: use one of {', '.join(WIRES)}")
    if wire == OPENAI_WIRE:
        return _openai_request(body)
    return _friendli_request(body)


# -- OpenAI -------------------------------------------------------------------------------


def _openai_request(body: Mapping[str, JSON]) -> GenerationRequest:
    max_tokens = _optional_int(body, "max_tokens")
    prompt_logprobs = _prompt_logprobs(body)
    return GenerationRequest(
        prompts=_openai_prompts(body.get("prompt")),
        sampling=_sampling(body, OPENAI_SAMPLING_FIELDS),
        n=_optional_int(body, "n") or 1,
        best_of=_optional_int(body, "best_of"),
        echo=_flag(body, "echo"),
        logprobs=_optional_int(body, "logprobs"),
        max_tokens=OPENAI_DEFAULT_MAX_TOKENS if max_tokens is None else max_tokens,
        stop=_stops(body.get("stop")),
        seed=_seed(body.get("seed")),
        ignore_eos=_flag(body, "ignore_eos"),
        stop_token_ids=_token_ids(body.get("stop_token_ids"), "stop_token_ids",
                                  allow_empty=True),
        include_stop_str_in_output=_flag(body, "include_stop_str_in_output"),
        prompt_logprobs=prompt_logprobs,
        tokens_as_ids=_flag(body, "return_tokens_as_token_ids"),
        truncate_prompt_tokens=_optional_int(body, "truncate_prompt_tokens"),
        vllm_fields=any(name in body for name in VLLM_ONLY_FIELDS),
        prompt_field="prompt",
    )


def _openai_prompts(value: JSON) -> tuple[PromptInput, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and value:
        if all(isinstance(item, str) for item in value):
            return tuple(value)
        if all(_is_token_id(item) for item in value):
            return (tuple(value),)
        if all(_is_token_list(item) for item in value):
            return tuple(tuple(item) for item in value)
    raise InvalidRequestError(
        "prompt must be a string, a non-empty list of strings, a non-empty list of token ids "
        "or a non-empty list of non-empty token id lists",
        param="prompt",
    )


VLLM_ONLY_FIELDS = (
    "ignore_eos", "stop_token_ids", "include_stop_str_in_output", "skip_special_tokens",
    "spaces_between_special_tokens", "prompt_logprobs", "return_tokens_as_token_ids",
    "allowed_token_ids", "truncate_prompt_tokens", "add_special_tokens",
)
"""The fields only vLLM's contract (``VllmCompletionRequest``) accepts: a body holding one
passed that contract, so its answer carries vLLM's response fields (``stop_reason``,
``prompt_logprobs``), as vLLM's every answer does. The engine honours every one of them;
``skip_special_tokens``, ``spaces_between_special_tokens`` and ``add_special_tokens`` are
accepted with any value because the reference tokenizer puts no special token in text and
adds none to prompts, so they change nothing."""
VLLM_MAX_LOGPROBS = 20
"""``vllm serve``'s default ``--max-logprobs``: more prompt logprobs are refused."""


def _prompt_logprobs(body: Mapping[str, JSON]) -> int | None:
    """vLLM's ``prompt_logprobs``: refused on a stream when it asks for alternatives, and past
    ``--max-logprobs`` (``-1``, the whole vocabulary, is past it), as vLLM refuses them."""
    value = _optional_int(body, "prompt_logprobs")
    if value is None:
        return None
    if body.get("stream") is True and value != 0:
        raise InvalidRequestError("`prompt_logprobs` are not available when `stream=True`.",
                                  param="prompt_logprobs")
    if value == -1 or value > VLLM_MAX_LOGPROBS:
        raise InvalidRequestError(
            f"Requested prompt logprobs of {value}, which is greater than max allowed: "
            f"{VLLM_MAX_LOGPROBS}", param="prompt_logprobs")
    return value


# -- FriendliAI ---------------------------------------------------------------------------


def _friendli_request(body: Mapping[str, JSON]) -> GenerationRequest:
    _reject_unsupported(body)
    prompts, field = _friendli_prompts(body)
    return GenerationRequest(
        prompts=prompts,
        sampling=_sampling(body, FRIENDLI_SAMPLING_FIELDS),
        n=_optional_int(body, "n") or 1,
        logprobs=_optional_int(body, "logprobs"),
        max_tokens=_optional_int(body, "max_tokens"),
        max_total_tokens=_optional_int(body, "max_total_tokens"),
        min_total_tokens=_optional_int(body, "min_total_tokens"),
        stop=_stops(body.get("stop")),
        stop_token_sequences=_token_sequences(body.get("stop_tokens"), "stop_tokens"),
        eos_token_ids=_token_ids(body.get("eos_token"), "eos_token", allow_empty=True),
        bad_words=_strings(body.get("bad_words"), "bad_words"),
        seed=_seed(body.get("seed")),
        forced_output_tokens=_token_ids(
            body.get("forced_output_tokens"), "forced_output_tokens", allow_empty=True
        ),
        prompt_field=field,
    )


def _friendli_prompts(body: Mapping[str, JSON]) -> tuple[tuple[PromptInput, ...], str]:
    prompt, tokens = body.get("prompt"), body.get("tokens")
    if (prompt is None) == (tokens is None):
        raise InvalidRequestError("Exactly one of `prompt` and `tokens` is required.",
                                  param="prompt")
    if tokens is not None:
        return (_token_ids(tokens, "tokens"),), "tokens"
    if isinstance(prompt, str):
        return (prompt,), "prompt"
    if isinstance(prompt, list) and prompt and all(isinstance(p, str) for p in prompt):
        return tuple(prompt), "prompt"
    raise InvalidRequestError("prompt must be a string or a non-empty list of strings",
                              param="prompt")


def _reject_unsupported(body: Mapping[str, JSON]) -> None:
    """Encoder-decoder and embedding fields: valid wire values the reference model cannot do."""
    for name in ("encoder_no_repeat_ngram", "encoder_repetition_penalty"):
        value = body.get(name)
        if value is not None and value != 1:
            raise UnsupportedParameterError(
                f"{name} applies to encoder-decoder models; the reference model is decoder-only, "
                f"so only 1 (or null) is accepted, got {value!r}",
                param=name,
            )
    for name in ("embedding_to_replace", "token_index_to_replace"):
        if body.get(name):
            raise UnsupportedParameterError(
                f"{name} is not supported: the reference model has no embedding inputs; "
                "send an empty list or null",
                param=name,
            )


# -- shared conversions -------------------------------------------------------------------


def _sampling(body: Mapping[str, JSON], fields: tuple[str, ...]) -> SamplingParams:
    """The engine's sampling keywords from the wire's forms: ``null`` means default,
    ``logit_bias`` keys are id strings (``{"50256": -100}``), ``bad_word_tokens`` is
    ``[{"tokens": [...]}, ...]`` (bare id lists too), ``response_format`` is
    ``{"type": ...}`` with ``json_schema.schema`` or ``schema`` (the engine's
    ``response_schema``). The engine's errors name their parameter."""
    wire: dict[str, Any] = {name: body[name] for name in fields if body.get(name) is not None}
    if wire.get("top_p") == 0:
        wire["top_p"] = SMALLEST_TOP_P
    if "logit_bias" in wire:
        wire["logit_bias"] = _logit_bias(wire["logit_bias"])
    raw_words = wire.get("bad_word_tokens")
    if isinstance(raw_words, Sequence) and not isinstance(raw_words, (str, bytes)):
        wire["bad_word_tokens"] = [
            item.get("tokens") if isinstance(item, Mapping) else item for item in raw_words
        ]
    if "response_format" in wire:
        raw_format = wire["response_format"]
        wire["response_format"] = _response_format_type(raw_format)
        schema = _response_schema(raw_format)
        if schema is not None:
            wire["response_schema"] = schema
    try:
        return SamplingParams(**wire)
    except InvalidParameter as error:
        param = error.param if error.param in fields else None
        raise InvalidRequestError(str(error), param=param) from None


def _logit_bias(raw: object) -> dict[int, Any]:
    """The biases by token id, each clamped to -100..100 as vLLM clamps them: OpenAI's and
    FriendliAI's schemas refuse a bias beyond that before the wire, vLLM's takes it
    (``VllmCompletionRequest.logit_bias``)."""
    if not isinstance(raw, Mapping):
        raise InvalidRequestError(f"logit_bias must be an object, got {raw!r}",
                                  param="logit_bias")
    return {_wire_token_id(key): _clamped(bias) for key, bias in raw.items()}


def _clamped(bias: object) -> object:
    if isinstance(bias, (int, float)) and not isinstance(bias, bool) and math.isfinite(bias):
        return min(100.0, max(-100.0, bias)) if abs(bias) > 100 else bias
    return bias  # not a finite number: the engine's typed error names logit_bias


def _wire_token_id(key: object) -> int:
    if isinstance(key, str) and key.isascii() and key.isdigit():
        return int(key)
    if isinstance(key, int) and not isinstance(key, bool):
        return key
    raise InvalidRequestError(f"logit_bias keys must be token ids, got {key!r}",
                              param="logit_bias")


def _response_format_type(raw: object) -> object:
    """``{"type": "json_object"}`` -> ``"json_object"``; a bad type keeps the whole value in
    the engine's message."""
    kind = raw.get("type") if isinstance(raw, Mapping) else raw
    if kind not in RESPONSE_FORMAT_TYPES:
        raise InvalidRequestError(
            f"response_format type must be one of {', '.join(RESPONSE_FORMAT_TYPES)}, "
            f"got {raw!r}",
            param="response_format",
        )
    return kind


def _response_schema(raw: object) -> object:
    """The schema that goes with the type: ``json_schema.schema`` for json_schema, ``schema``
    for regex (the engine checks both, and that the other types have none)."""
    if not isinstance(raw, Mapping):
        return None
    if raw.get("type") == "json_schema":
        inner = raw.get("json_schema")
        return inner.get("schema") if isinstance(inner, Mapping) else None
    return raw.get("schema") if raw.get("type") == "regex" else None


def _is_token_id(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_token_list(value: object) -> bool:
    return isinstance(value, list) and bool(value) and all(_is_token_id(t) for t in value)


def _token_ids(value: JSON, param: str, *, allow_empty: bool = False) -> tuple[int, ...]:
    if value is None and allow_empty:
        return ()
    if isinstance(value, list) and (value or allow_empty) and all(map(_is_token_id, value)):
        return tuple(value)
    raise InvalidRequestError(f"{param} must be a list of non-negative token ids", param=param)


def _token_sequences(value: JSON, param: str) -> tuple[tuple[int, ...], ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise InvalidRequestError(f'{param} must be a list of {{"tokens": [...]}}', param=param)
    sequences = []
    for item in value:
        tokens = item.get("tokens") if isinstance(item, dict) else item
        sequences.append(_token_ids(tokens, param))
    return tuple(sequences)


def _strings(value: JSON, param: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise InvalidRequestError(f"{param} must be a list of strings", param=param)


def _stops(value: JSON) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    return _strings(value, "stop")


def _seed(value: JSON) -> int | tuple[int, ...] | None:
    """An int, or one seed per choice (FriendliAI's list form; faults use it on OpenAI too)."""
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    if isinstance(value, list) and value and all(
        isinstance(s, int) and not isinstance(s, bool) for s in value
    ):
        return tuple(value)
    raise InvalidRequestError("seed must be an integer or a non-empty list of integers",
                              param="seed")


def _optional_int(body: Mapping[str, JSON], name: str) -> int | None:
    value = body.get(name)
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise InvalidRequestError(f"{name} must be an integer, got {value!r}", param=name)


def _flag(body: Mapping[str, JSON], name: str) -> bool:
    value = body.get(name)
    if value is None or isinstance(value, bool):
        return bool(value)
    raise InvalidRequestError(f"{name} must be a boolean, got {value!r}", param=name)
