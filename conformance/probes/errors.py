"""Probes of error handling and of the models listing.

Spec: the ``400`` / ``422`` responses of ``spec/completions.yaml`` (``BadRequest``: "The request
is invalid (OpenAI profiles); ``error.param`` names the field"; ``UnprocessableEntity`` for
FriendliAI), the request schemas' ``required: [model, ...]`` with the profiles'
``defaultable_fields``, and ``GET /v1/models`` (``ModelList``).
"""

from __future__ import annotations

from .invalid_cases import invalid_cases, valid_base
from .model import ProbeSession
from .prompts import PROMPT_A
from .registry import probe


@probe("invalid", "invalid requests from the contract, then a health check")
async def invalid(s: ProbeSession) -> None:
    """Every invalid case of the profile, concurrently; then the valid request they were all
    made from (health: a server that stays broken, or remembers the errors, fails it)."""
    cases = invalid_cases(s.settings.profile, s.settings.model, PROMPT_A)
    steps = []
    for case in cases:
        if case.raw is not None:
            steps.append(s.complete_raw(case.key, case.raw, "application/json"))
        else:
            steps.append(s.complete(case.key, case.body, invalid=True))
    await s.gather(*steps)
    s.note("cases", {c.key: {"kind": c.kind, "why": c.why, "stream": c.stream} for c in cases})
    await s.complete("health", valid_base(s.settings.model, PROMPT_A))


@probe("model-missing", "a greedy request without model")
async def model_missing(s: ProbeSession) -> None:
    """A body with no ``model``: the profile's 4xx naming ``model``, or (where the profile lets
    the server default it) the served model's answer. Sent as invalid: ERRORS-008 does not
    judge it, whichever way a server is allowed to answer it."""
    body = s.body(PROMPT_A, max_tokens=4, temperature=0)
    del body["model"]
    await s.complete("missing", body, invalid=True)


@probe("models", "GET /models", operation="models")
async def models(s: ProbeSession) -> None:
    await s.get("list", s.settings.models_url)
