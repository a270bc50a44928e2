"""What the contract makes of a request body: valid, or invalid and how.

Spec: the profile's request schema (``spec.get_profile(name).validator("request")``), the
``x-cross-field-rules`` of ``spec/completions.yaml``, and three things profiles leave to the
server: ``unknown_fields: ignore`` lets a server ignore fields it does not know;
``defaultable_fields`` lets it fill in a required field left out (a single-model server's
``model``); and the lenient ``openai-compatible`` profile only recommends OpenAI's limits
(logprobs <= 5, 4 stop strings, best_of <= 20), which vLLM-like servers raise. The fuzzer judges
what it sent with :func:`classify`; the invalid-request strategies keep only bodies every
server must reject.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from jsonschema.exceptions import best_match

import spec
from conformance.contract.fastschema import surely_valid
from spec import JSON

Kind = Literal["valid", "schema", "unknown-field", "limit", "cross-field", "ignorable"]

OPENAI_LIMITS = {"logprobs": 5, "stop": 4, "best_of": 20}
"""OpenAI's limits that vLLM-like servers raise: only a SHOULD for ``openai-compatible``."""


@dataclass(frozen=True)
class Classification:
    """What the contract makes of a body; ``why`` says it in a sentence."""

    kind: Kind
    why: str = ""

    @property
    def invalid(self) -> bool:
        """The server should reject it (a MUST for ``schema`` and ``cross-field``; a SHOULD for
        ``limit`` and ``unknown-field``, which many servers accept)."""
        return self.kind in ("schema", "unknown-field", "limit", "cross-field")



def classify(body: JSON, profile: spec.Profile) -> Classification:
    """The contract's view of ``body`` for ``profile``'s completions operation."""
    if not isinstance(body, dict):
        return Classification("schema", "the body is not a JSON object")
    # DEVIATION: a defaultable field sent as "" counts as left out: vLLM serves its model for an
    # empty `model` as for a missing one (`_is_model_supported` and `_get_model_name` take any
    # falsy name for the served model:
    # https://github.com/vllm-project/vllm/blob/7ded96b3c73f63400cdb048a73c34292ba862d99/vllm/entrypoints/openai/serving_engine.py).
    defaulted = [name for name in profile.defaultable_fields if body.get(name, "") == ""]
    if defaulted:
        found = classify({**body, **dict.fromkeys(defaulted, "default")}, profile)
        if found.kind != "valid":
            return found
        return Classification("ignorable", f"{', '.join(defaulted)} left out or empty: the "
                                           "profile lets a server fill it in (or reject the "
                                           "request)")
    if surely_valid(profile.name, "request", body):
        return _cross_field(body, profile)
    validator = profile.validator("request")
    error = best_match(validator.iter_errors(body))
    if error is None:
        return _cross_field(body, profile)
    known = {k: v for k, v in body.items() if k in profile.request_fields}
    if len(known) < len(body) and validator.is_valid(known):
        found = _cross_field(known, profile)
        if found.invalid:
            return found
        if profile.unknown_fields == "ignore":
            return Classification("ignorable", "unknown fields only")
        return Classification("unknown-field", "unknown fields only (the profile rejects them)")
    if profile.unknown_fields != "ignore":
        known = body
    if profile.openai_limits == "recommended" and validator.is_valid(
            _within_openai_limits(known)):
        return Classification("limit", f"beyond OpenAI's limits: {error.message}")
    where = ".".join(str(p) for p in error.absolute_path) or "body"
    return Classification("schema", f"{where}: {error.message}"[:300])


def _cross_field(body: dict[str, JSON], profile: spec.Profile) -> Classification:
    violations = spec.cross_field_violations(body, profile.name)
    if violations:
        return Classification("cross-field", violations[0].message)
    return Classification("valid")


def _within_openai_limits(body: dict[str, JSON]) -> dict[str, JSON]:
    clipped = dict(body)
    for name in ("logprobs", "best_of"):
        value = clipped.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            clipped[name] = min(value, OPENAI_LIMITS[name])
    if isinstance(clipped.get("stop"), list):
        clipped["stop"] = clipped["stop"][: OPENAI_LIMITS["stop"]]
    return clipped
