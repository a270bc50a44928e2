"""Invalid requests taken from the contract, each checked against it before it is sent.

Spec: the request schemas of ``spec/completions.yaml`` (ranges, types, closed objects) and its
``x-cross-field-rules`` (``best_of >= n``, ``best_of`` not streamed, ``stream_options`` only
with ``stream``, FriendliAI's ``prompt`` xor ``tokens``...). A case is sent only if the
profile's own request schema (or a cross-field rule) rejects it, so the harness never calls a
valid request invalid; a case naming a field outside the profile is left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import spec
from spec import JSON

CaseKind = Literal["schema", "unknown-field", "limit", "cross-field", "malformed"]

OPENAI_LIMITS = frozenset({"logprobs-above-limit", "stop-five-strings", "best-of-above-20"})
"""Cases that break OpenAI's limits (logprobs <= 5, 4 stop strings, best_of <= 20), which
OpenAI-compatible servers often raise (vLLM allows 20 logprobs): kind ``limit`` there."""


@dataclass(frozen=True)
class InvalidCase:
    key: str
    kind: CaseKind
    body: JSON
    why: str
    raw: bytes | None = None

    @property
    def stream(self) -> bool:
        return isinstance(self.body, dict) and self.body.get("stream") is True


def _schema_cases(prompt_field: str) -> list[tuple[str, dict[str, JSON]]]:
    return [
        ("temperature-above-2", {"temperature": 3}),
        ("n-zero", {"n": 0}),
        ("max-tokens-negative", {"max_tokens": -1}),
        ("top-p-above-1", {"top_p": 2}),
        ("frequency-penalty-above-2", {"frequency_penalty": 3}),
        ("presence-penalty-below-minus-2", {"presence_penalty": -3}),
        ("logprobs-above-limit", {"logprobs": 6}),
        ("stop-five-strings", {"stop": ["a", "b", "c", "d", "e"]}),
        ("logit-bias-out-of-range", {"logit_bias": {"300": 200}}),
        ("best-of-above-20", {"best_of": 21}),
        ("max-tokens-string", {"max_tokens": "16"}),
        ("stream-not-boolean", {"stream": "yes"}),
        ("prompt-number", {prompt_field: 123}),
        ("temperature-above-2-streamed", {"temperature": 3, "stream": True}),
    ]


def _cross_field_cases(profile: spec.Profile) -> list[tuple[str, dict[str, JSON]]]:
    if profile.wire == "friendli":
        return [
            ("prompt-and-tokens", {"tokens": [300, 301]}),
            ("seed-list-length", {"seed": [1, 2], "n": 1}),
            ("seed-list-length-streamed", {"seed": [1, 2], "n": 1, "stream": True}),
            ("max-tokens-and-max-total-tokens", {"max_tokens": 4, "max_total_tokens": 32}),
            ("min-tokens-and-min-total-tokens", {"min_tokens": 1, "min_total_tokens": 4}),
            ("min-tokens-with-response-format", {"min_tokens": 1,
                                                 "response_format": {"type": "json_object"}}),
            ("json-schema-not-a-schema", {"response_format": {
                "type": "json_schema", "json_schema": {"schema": {"type": "object",
                                                                  "required": "ok"}}}}),
            ("regex-with-lookahead", {"response_format": {"type": "regex",
                                                          "schema": "(?=a)[a-c]+"}}),
            ("stream-options-without-stream", {"stream": False,
                                               "stream_options": {"include_usage": True}}),
        ]
    return [
        ("best-of-below-n", {"best_of": 1, "n": 2}),
        ("best-of-streamed", {"best_of": 2, "n": 1, "stream": True}),
        ("stream-options-without-stream", {"stream": False,
                                           "stream_options": {"include_usage": True}}),
        ("max-tokens-zero-without-echo", {"max_tokens": 0}),  # vLLM's own check
    ]


def valid_base(model: str, prompt: str) -> dict[str, JSON]:
    """The valid request every invalid case adds its fault to."""
    return {"model": model, "prompt": prompt, "max_tokens": 4}


def invalid_cases(profile: spec.Profile, model: str, prompt: str) -> list[InvalidCase]:
    """The invalid requests for ``profile``, each with the reason the contract rejects it."""
    validator = profile.validator("request")
    fields = set(profile.request_fields)
    prompt_field = "prompt"
    base = valid_base(model, prompt)
    cases: list[InvalidCase] = []
    for key, extra in _schema_cases(prompt_field):
        if not set(extra) <= fields:
            continue
        body = {**base, **extra}
        errors = sorted(validator.iter_errors(body), key=lambda e: list(e.path))
        if errors:
            lenient = profile.openai_limits == "recommended" and key in OPENAI_LIMITS
            kind: CaseKind = "limit" if lenient else "schema"
            cases.append(InvalidCase(key, kind, body, errors[0].message))
    if profile.unknown_fields == "reject":
        body = {**base, "frobnicate": True}
        cases.append(InvalidCase("unknown-field", "unknown-field", body,
                                 "the profile rejects unknown fields"))
    for key, extra in _cross_field_cases(profile):
        if not set(extra) <= fields:
            continue
        body = {**base, **extra}
        if any(True for _ in validator.iter_errors(body)) and key != "prompt-and-tokens":
            continue  # schema-invalid for another reason: not a cross-field case
        violations = spec.cross_field_violations(body, profile.name)
        if violations:
            cases.append(InvalidCase(key, "cross-field", body, violations[0].message))
    raw = b'{"model": "' + model.encode() + b'", "prompt": "unterminated'
    cases.append(InvalidCase("malformed-json", "malformed", None, "the body is not JSON", raw))
    return cases
