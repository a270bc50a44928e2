"""The invalid-request strategies: every body one that every server of the profile must reject."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings

import spec
from conformance.contract.validity import classify
from conformance.strategies import InvalidRequest, invalid_completion_requests

PROFILES = ("openai", "openai-compatible", "friendli")


@pytest.mark.parametrize("profile_name", PROFILES)
def test_invalid_requests_must_be_rejected(profile_name: str) -> None:
    chosen = spec.get_profile(profile_name)
    kinds: Counter[str] = Counter()

    @settings(max_examples=80, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(invalid_completion_requests(chosen))
    def check(case: InvalidRequest) -> None:
        verdict = classify(case.body, chosen)
        assert verdict.kind in ("schema", "cross-field"), (case, verdict)
        assert case.kind == verdict.kind and case.reason
        if isinstance(case.body, dict) and case.param is not None and case.kind == "schema":
            assert case.param in case.body or case.param == "model"
        kinds[case.kind] += 1

    check()
    assert kinds["schema"]
    # both kinds can be drawn (found, not hoped for: 80 random draws once held no cross-field)
    for kind in ("schema", "cross-field"):
        found = find(invalid_completion_requests(chosen), lambda case, k=kind: case.kind == k,
                     settings=settings(database=None, max_examples=2000, phases=[Phase.generate],
                                       suppress_health_check=list(HealthCheck)))
        assert found.kind == kind


def test_lenient_limits_are_never_called_invalid() -> None:
    @settings(max_examples=80, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(invalid_completion_requests(spec.get_profile("openai-compatible")))
    def check(case: InvalidRequest) -> None:
        assert case.param != "no_such_field"
        if isinstance(case.body, dict) and isinstance(case.body.get("logprobs"), int):
            assert case.body["logprobs"] <= 5 or case.param != "logprobs"

    check()


@pytest.mark.parametrize("profile_name", ["vllm", "openai-compatible"])
def test_an_empty_model_is_a_missing_one_where_the_profile_lets_it_default(profile_name: str
                                                                           ) -> None:
    """vLLM serves its model for ``"model": ""`` as for no model (issue 49): neither is a
    request every server must reject, under the profiles that let a server fill model in."""
    body = {"model": "", "prompt": "p", "max_tokens": 2}
    profile = spec.get_profile(profile_name)
    assert classify(body, profile).kind == "ignorable"
    assert classify(body, spec.get_profile("openai")).kind == "schema"

    @settings(max_examples=60, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(invalid_completion_requests(profile))
    def check(case: InvalidRequest) -> None:
        assert not (isinstance(case.body, dict) and case.body.get("model") == "")

    check()
