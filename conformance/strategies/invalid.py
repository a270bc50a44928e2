"""Invalid completion requests: a valid body with exactly one thing broken.

Spec: the profile's request schema (ranges, types, closed objects, required fields) and
``x-cross-field-rules``. Every draw is checked with
:func:`conformance.contract.validity.classify`, and only bodies every server of the profile must
reject are kept: a body the lenient ``openai-compatible`` profile only *recommends* rejecting
(OpenAI's limits) or lets a server ignore (unknown fields under ``unknown_fields: ignore``) is
never called invalid here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

import spec
from conformance.contract.validity import classify

from .requests import check_profile, completion_requests

JSON = Any


@dataclass(frozen=True)
class InvalidRequest:
    """A body the server must reject with a 4xx and the error envelope.

    ``param`` is the field at fault (None when no single field is, e.g. a body that is not an
    object); ``kind`` is ``schema`` or ``cross-field``; ``reason`` says what is wrong.
    """

    body: JSON
    param: str | None
    reason: str
    kind: str = "schema"


def _mutations(profile: spec.Profile) -> list[tuple[str, JSON, str]]:
    """(field, bad value, reason) candidates for the profile's fields."""
    fields = set(profile.request_fields)
    table: list[tuple[str, JSON, str]] = [
        ("temperature", 3.5, "temperature above 2"),
        ("temperature", -0.5, "temperature below 0"),
        ("temperature", "hot", "temperature of the wrong type"),
        ("top_p", 1.5, "top_p above 1"),
        ("n", 0, "n below 1"),
        ("n", 1000, "n above 128"),
        ("n", 1.5, "n not an integer"),
        ("max_tokens", -1, "negative max_tokens"),
        ("max_tokens", "16", "max_tokens of the wrong type"),
        ("max_tokens", True, "max_tokens a boolean"),
        ("presence_penalty", 3, "presence_penalty above 2"),
        ("frequency_penalty", -3, "frequency_penalty below -2"),
        ("stream", "yes", "stream of the wrong type"),
        ("stream_options", "usage", "stream_options not an object"),
        ("echo", 1, "echo of the wrong type"),
        ("logprobs", -1, "negative logprobs"),
        ("logprobs", "5", "logprobs of the wrong type"),
        ("stop", ["a", "b", "c", "d", "e"], "more than 4 stop sequences"),
        ("stop", 5, "stop of the wrong type"),
        ("stop", [""], "an empty stop sequence"),
        ("logit_bias", {"13": 500}, "logit_bias value above 100"),
        ("logit_bias", {"thirteen": 1}, "logit_bias key not a token id"),
        ("prompt", [], "an empty prompt list"),
        ("prompt", [[]], "an empty token list"),
        ("prompt", [-1], "a negative token id"),
        ("prompt", 7, "prompt of the wrong type"),
        ("prompt", None, "a null prompt"),
        ("best_of", 21, "best_of above 20"),
        ("model", 7, "model of the wrong type"),
        ("model", "", "an empty model"),
        ("top_k", -1, "negative top_k"),
        ("min_p", 2, "min_p above 1"),
        ("min_tokens", -1, "negative min_tokens"),
        ("repetition_penalty", 0, "repetition_penalty not positive"),
        ("tokens", [-5], "a negative token id in tokens"),
        ("seed", "seven", "seed of the wrong type"),
        ("bad_word_tokens", [{"tokens": []}], "an empty bad-word token sequence"),
        ("stop_tokens", [[1, 2]], "stop_tokens entries not objects"),
        ("response_format", {"type": "yaml"}, "an unknown response_format type"),
        ("xtc_threshold", 2, "xtc_threshold above 1"),
        ("no_repeat_ngram", 0, "no_repeat_ngram below 1"),
    ]
    limit = profile.limits.get("logprobs")
    if limit is not None:
        table.append(("logprobs", limit + 100, f"logprobs above {limit}"))
    if profile.wire == "friendli":
        table.append(("stop", "x", "stop as a bare string (FriendliAI takes a list)"))
    return [(name, value, reason) for name, value, reason in table if name in fields]


def cross_field_cases(profile: spec.Profile) -> list[tuple[dict[str, JSON], str, str]]:
    """(fields to merge, param, reason) for the profile's cross-field rules: merged over a
    valid body, each breaks one rule."""
    cases: dict[str, tuple[dict[str, JSON], str, str]] = {
        "best-of-at-least-n": ({"best_of": 1, "n": 2}, "best_of", "best_of below n"),
        "best-of-not-streamed": ({"best_of": 2, "stream": True}, "best_of",
                                 "best_of > 1 with stream"),
        "stream-options-need-stream": ({"stream_options": {"include_usage": True},
                                        "stream": False}, "stream_options",
                                       "stream_options without stream"),
        "vllm-stream-options-need-stream": ({"stream_options": {"include_usage": True},
                                             "stream": False}, "stream_options",
                                            "stream_options without stream"),
        "vllm-max-tokens-zero-needs-echo": ({"max_tokens": 0, "echo": False}, "max_tokens",
                                            "max_tokens 0 without echo"),
        "vllm-min-tokens-at-most-max-tokens": ({"max_tokens": 2, "min_tokens": 4},
                                               "max_tokens", "min_tokens above max_tokens"),
        "vllm-greedy-n-is-one": ({"n": 2, "temperature": 0}, "n", "n 2 at temperature 0"),
        "vllm-prompt-logprobs-not-streamed": ({"prompt_logprobs": 1, "stream": True},
                                              "prompt_logprobs", "prompt_logprobs streamed"),
        "max-tokens-xor-max-total-tokens": ({"max_tokens": 4, "max_total_tokens": 64},
                                            "max_tokens", "max_tokens and max_total_tokens"),
        "min-tokens-xor-min-total-tokens": ({"min_tokens": 1, "min_total_tokens": 4},
                                            "min_tokens", "min_tokens and min_total_tokens"),
        "min-tokens-without-response-format": ({"min_tokens": 1,
                                                "response_format": {"type": "json_object"}},
                                               "min_tokens", "min_tokens with response_format"),
        "json-schema-is-a-schema": ({"response_format": {
            "type": "json_schema", "json_schema": {"schema": {"type": "object",
                                                              "required": "ok"}}}},
            "response_format", "json_schema that is not a JSON Schema"),
        "regex-without-lookarounds": ({"response_format": {"type": "regex",
                                                           "schema": "(?=a)[a-c]+"}},
                                      "response_format", "regex with a lookahead"),
        "seed-list-matches-n": ({"seed": [1, 2, 3], "n": 2}, "seed", "seed list of the wrong size"),
        "prompt-xor-tokens": ({"tokens": [1, 2]}, "prompt", "both prompt and tokens"),
    }
    applicable = {rule.id for rule in spec.cross_field_rules_for(profile.name)}
    fields = set(profile.request_fields)
    return [case for rule_id, case in cases.items()
            if rule_id in applicable and set(case[0]) <= fields]


@st.composite
def _invalid(draw: st.DrawFn, profile: spec.Profile, model: str) -> InvalidRequest:
    base = draw(completion_requests(profile, model=model, max_tokens=4, stream=False))
    kinds = ["field", "cross", "missing", "shape"]
    if profile.unknown_fields == "reject":
        kinds.append("unknown")
    kind = draw(st.sampled_from(kinds))
    if kind == "cross" and cross_field_cases(profile):
        merge, param, reason = draw(st.sampled_from(cross_field_cases(profile)))
        body = {**base, **merge}
        if param != "prompt" and "prompt" in body and "tokens" in body:
            body.pop("tokens")
        return InvalidRequest(body, param, reason, "cross-field")
    if kind == "unknown":
        return InvalidRequest({**base, "no_such_field": 1}, "no_such_field", "an unknown field")
    if kind == "missing":
        return InvalidRequest({k: v for k, v in base.items() if k != "model"}, "model",
                              "model missing")
    if kind == "shape":
        body = draw(st.sampled_from([[], "prompt", 42, None, [{"model": model}]]))
        return InvalidRequest(body, None, "a body that is not a JSON object")
    name, value, reason = draw(st.sampled_from(_mutations(profile)))
    body = {**base, name: value}
    if name == "tokens":
        body.pop("prompt", None)
    if name == "prompt":
        body.pop("tokens", None)
    return InvalidRequest(body, name, reason)


def invalid_completion_requests(
    profile: spec.Profile, *, model: str = "reference-ngram"
) -> st.SearchStrategy[InvalidRequest]:
    """Bodies every server of ``profile`` must reject with a 4xx and the error envelope."""
    check_profile(profile)
    if not isinstance(model, str) or not model:
        raise ValueError(f"model={model!r} must be a non-empty string")

    def must_be_rejected(case: InvalidRequest) -> bool:
        verdict = classify(case.body, profile)
        return verdict.kind in ("schema", "cross-field")

    def with_kind(case: InvalidRequest) -> InvalidRequest:
        kind = classify(case.body, profile).kind
        return case if kind == case.kind else InvalidRequest(case.body, case.param,
                                                             case.reason, kind)

    return _invalid(profile, model).filter(must_be_rejected).map(with_kind)
