"""How a generated request body is made safe and servable before it is sent.

Two jobs, both pure functions of a body (what the contract makes of a body is
:func:`conformance.contract.validity.classify`'s job):

* :func:`cap` bounds what any body may cost a live endpoint, valid or not: ``max_tokens``,
  ``n``, ``best_of``, prompt list sizes and prompt lengths (spec: ``MaxTokens`` "The maximum
  number of tokens to generate"; the schema cannot bound cost, so the fuzzer must).
* :func:`servable` turns a valid body into one every server of the profile can serve: the model
  under test, token ids below 256 (which any vocabulary of 256 or more tokens has), the
  cross-field rules met, fields whose valid values depend on the model (embeddings, encoder
  knobs) dropped. It only ever turns a valid body into another valid body.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import spec
from spec import JSON

TOKEN_ID_SPACE = 256
"""Token ids are reduced below this: every byte-level (or byte-fallback) vocabulary has them."""

MODEL_DEPENDENT = (
    "embedding_to_replace", "token_index_to_replace",
    "encoder_no_repeat_ngram", "encoder_repetition_penalty",
)
"""FriendliAI fields whose valid values depend on the model (its embeddings, its encoder)."""


@dataclass(frozen=True)
class Caps:
    """Upper bounds on what one request may ask a server to generate."""

    max_tokens: int = 16
    max_n: int = 2
    max_best_of: int = 3
    max_prompts: int = 3
    max_prompt_chars: int = 200
    max_token_ids: int = 32

    def __post_init__(self) -> None:
        for name in ("max_tokens", "max_n", "max_best_of", "max_prompts", "max_prompt_chars",
                     "max_token_ids"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")


# -- caps: every body, valid or not ----------------------------------------------------------


def _is_int(value: JSON) -> bool:
    """An integer as JSON Schema counts them: ``3`` and ``3.0`` alike."""
    if isinstance(value, float):
        return value.is_integer()
    return isinstance(value, int) and not isinstance(value, bool)


def cap(body: JSON, caps: Caps, *, friendli: bool) -> JSON:
    """``body`` with generation bounded by ``caps``; values of the wrong type are left alone
    (they make the body invalid, which is what a negative case is for)."""
    if not isinstance(body, dict):
        return body
    body = copy.deepcopy(body)
    if friendli and "max_total_tokens" in body:
        # prompt + generated tokens: the prompt's length in the server's tokens is unknown here,
        # so max_tokens bounds generation instead (a value of the wrong type stays: it is invalid)
        total = body.pop("max_total_tokens")
        if total is not None and not _is_int(total):
            body["max_total_tokens"] = total
    limit = body.get("max_tokens")
    if limit is None:
        body["max_tokens"] = caps.max_tokens
    elif _is_int(limit):
        body["max_tokens"] = min(limit, caps.max_tokens)
    for name, bound in (("n", caps.max_n), ("best_of", caps.max_best_of),
                        ("min_tokens", caps.max_tokens), ("logprobs", 20),
                        # within any model's context (vLLM refuses more than its length)
                        ("truncate_prompt_tokens", caps.max_token_ids)):
        if _is_int(body.get(name)):
            body[name] = min(body[name], bound)
    if _is_int(body.get("min_total_tokens")):
        body.pop("min_total_tokens")
    for name in ("prompt", "tokens", "forced_output_tokens", "eos_token"):
        if name in body:
            body[name] = _cap_prompt(body[name], caps)
    return body


def _cap_prompt(value: JSON, caps: Caps) -> JSON:
    if isinstance(value, str):
        return value[: caps.max_prompt_chars]
    if not isinstance(value, list):
        return value
    if value and all(_is_int(v) for v in value):
        return value[: caps.max_token_ids]
    return [_cap_prompt(item, caps) for item in value[: caps.max_prompts]]


# -- servable: valid bodies only --------------------------------------------------------------


def _ids(value: JSON) -> JSON:
    if isinstance(value, list):
        return [_ids(item) for item in value]
    if _is_int(value) and value >= 0:
        return int(value) % TOKEN_ID_SPACE
    return value


def within_token_space(body: dict[str, JSON]) -> dict[str, JSON]:
    """``body`` with its token-id prompts' ids reduced below :data:`TOKEN_ID_SPACE` (a copy):
    ids valid in one vocabulary (the document's examples are GPT-2's) are out of another's."""
    body = copy.deepcopy(body)
    for name in ("prompt", "tokens", "eos_token", "forced_output_tokens", "allowed_token_ids",
                 "stop_token_ids"):
        if name in body:
            body[name] = _ids(body[name])
    return body


def servable(body: dict[str, JSON], profile: spec.Profile, *, model: str,
             features: frozenset[str] | None = None) -> dict[str, JSON]:
    """A valid body made servable by any server of the profile (see the module docstring)."""
    body = within_token_space(body)
    body["model"] = model
    _drop_unclaimed(body, profile.features if features is None else features)
    for name in ("bad_word_tokens", "stop_tokens"):
        if isinstance(body.get(name), list):
            body[name] = [{**s, "tokens": _ids(s.get("tokens"))} if isinstance(s, dict) else s
                          for s in body[name]]
    if isinstance(body.get("logit_bias"), dict):
        body["logit_bias"] = {
            str(int(key) % TOKEN_ID_SPACE) if key.isdigit() else key: value
            for key, value in body["logit_bias"].items()
        }
    for name in MODEL_DEPENDENT:
        body.pop(name, None)
    if isinstance(body.get("response_format"), dict):
        body["response_format"] = enforceable_format(body["response_format"])
    if body.get("forced_output_tokens") and body.get("response_format") is not None:
        # forced tokens must themselves fit the format; whether they do depends on the vocabulary
        body.pop("response_format")
    return _meet_cross_field_rules(body, profile.name)


ENFORCEABLE: dict[str, dict[str, JSON]] = {
    "json_schema": {"type": "json_schema", "json_schema": {"schema": {"type": "object"}}},
    "regex": {"type": "regex", "schema": "[a-z]{1,8}"},
}
"""What a valid ``json_schema`` / ``regex`` response_format becomes when servable: a schema
valid in JSON Schema's terms may still be one a server cannot enforce (a regex that does not
compile, keywords its grammar compiler lacks), and refusing it is right."""


def enforceable_format(response_format: dict[str, JSON]) -> dict[str, JSON]:
    """``response_format`` with a schema or pattern any server can enforce (:data:`ENFORCEABLE`)."""
    kind = response_format.get("type")
    if isinstance(kind, str) and kind in ENFORCEABLE:
        return copy.deepcopy(ENFORCEABLE[kind])
    return response_format


UNCLAIMED_FIELDS = {
    "suffix": "suffix", "best_of": "best_of", "logit_bias": "logit_bias", "echo": "echo",
    "logprobs": "logprobs", "seed": "seed", "stop": "stop", "stream_options": "include_usage",
    "stop_tokens": "stop_tokens", "n": "n",
}
"""A field, and the feature without which a server of the profile may reject it."""


def _drop_unclaimed(body: dict[str, JSON], features: frozenset[str]) -> None:
    """Leave out what a server that does not claim a feature may reject (spec/features.yaml):
    a valid body a server may refuse is no test of ``positive_data_acceptance``."""
    for name, feature in UNCLAIMED_FIELDS.items():
        if feature not in features:
            body.pop(name, None)
    if body.get("echo") and body.get("logprobs") is not None and "echo_logprobs" not in features:
        body.pop("echo")
    if body.get("max_tokens") == 0 and "max_tokens_zero" not in features:
        body["max_tokens"] = 1
    prompt = body.get("prompt")
    if isinstance(prompt, list) and prompt:
        token_ids = _is_int(prompt[0]) or isinstance(prompt[0], list)
        if token_ids and "token_prompts" not in features:
            body["prompt"] = "Hello"
        elif isinstance(prompt[0], str) and "prompt_lists" not in features:
            body["prompt"] = prompt[0]
    if "tokens" in body and "tokens_prompt" not in features:
        body.pop("tokens")
        body.setdefault("prompt", "Hello")
    if body.get("add_special_tokens") is False and isinstance(prompt, list):
        # no BOS token: an empty prompt is an empty token sequence, which vLLM refuses ("The
        # decoder prompt cannot be empty", vllm/v1/engine/input_processor.py of v0.32.0); a
        # valid body whose answer depends on the tokenizer tests no positive_data_acceptance
        body["prompt"] = [item or " " if isinstance(item, str) else item for item in prompt]


def _meet_cross_field_rules(body: dict[str, JSON], profile_name: str) -> dict[str, JSON]:
    """Repair cross-field violations one at a time, by the least surprising change."""
    for _ in range(10):
        violations = spec.cross_field_violations(body, profile_name)
        if not violations:
            break
        rule = violations[0]
        if rule.rule_id == "seed-list-matches-n":
            n = int(body["n"]) if _is_int(body.get("n")) else 1
            seeds = list(body["seed"])
            body["seed"] = (seeds * n)[:n] if seeds else [0] * n
        elif rule.rule_id == "best-of-at-least-n":
            body["best_of"] = body.get("n") or 1
        elif rule.rule_id == "prompt-xor-tokens" and "prompt" in body and "tokens" in body:
            body.pop("tokens")
        elif rule.rule_id == "vllm-max-tokens-zero-needs-echo":
            body["max_tokens"] = 1  # left out, the server would generate to its context's end
        elif rule.rule_id == "vllm-min-tokens-at-most-max-tokens":
            body["min_tokens"] = body["max_tokens"]
        else:
            body.pop(rule.param, None)
    return body
