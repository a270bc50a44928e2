"""Capping and repairing generated bodies, and the contract's view of them."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

import spec
from conformance.contract.validity import classify
from conformance.fuzz.bodies import Caps, cap, servable, within_token_space
from conformance.strategies import completion_requests

OPENAI = spec.get_profile("openai")
COMPATIBLE = spec.get_profile("openai-compatible")
FRIENDLI = spec.get_profile("friendli")
BASE = {"model": "m", "prompt": "Hi", "max_tokens": 4}


@pytest.mark.parametrize(("profile", "body", "kind"), [
    (OPENAI, BASE, "valid"),
    (OPENAI, {**BASE, "temperature": 3}, "schema"),
    (OPENAI, [BASE], "schema"),
    (OPENAI, {**BASE, "best_of": 1, "n": 2}, "cross-field"),
    (OPENAI, {**BASE, "stream_options": {"include_usage": True}}, "cross-field"),
    (OPENAI, {**BASE, "frobnicate": 1}, "unknown-field"),  # rejected, but only a SHOULD
    (OPENAI, {**BASE, "frobnicate": 1, "temperature": 3}, "schema"),
    (COMPATIBLE, {**BASE, "frobnicate": 1}, "ignorable"),
    (COMPATIBLE, {**BASE, "logprobs": 9}, "limit"),
    (OPENAI, {**BASE, "logprobs": 9}, "schema"),
    (COMPATIBLE, {**BASE, "logprobs": -1}, "schema"),
    # a single-model server may default `model` under the lenient profile (llama.cpp, vLLM)
    (COMPATIBLE, {"prompt": "Hi", "max_tokens": 4}, "ignorable"),
    (COMPATIBLE, {"prompt": "Hi", "max_tokens": -1}, "schema"),
    (OPENAI, {"prompt": "Hi", "max_tokens": 4}, "schema"),
    (FRIENDLI, {"model": "m", "prompt": "Hi", "tokens": [1]}, "schema"),
    (FRIENDLI, {"model": "m", "tokens": [1], "seed": [1, 2]}, "cross-field"),
    (FRIENDLI, {"model": "m", "tokens": [1], "n": 1.0, "seed": [1, 2]}, "cross-field"),
])
def test_classify(profile: spec.Profile, body: object, kind: str) -> None:
    verdict = classify(body, profile)
    assert verdict.kind == kind, verdict.why
    assert verdict.invalid is (kind in ("schema", "unknown-field", "limit", "cross-field"))


def test_cap_bounds_generation() -> None:
    capped = cap({**BASE, "max_tokens": 10**9, "n": 50, "best_of": 20,
                  "prompt": ["x" * 1000] * 9}, Caps(max_tokens=8), friendli=False)
    assert capped["max_tokens"] == 8 and capped["n"] == 2 and capped["best_of"] == 3
    assert len(capped["prompt"]) == 3 and all(len(p) == 200 for p in capped["prompt"])


def test_cap_sets_an_absent_or_null_max_tokens() -> None:
    assert cap({"model": "m", "prompt": "x"}, Caps(max_tokens=5), friendli=False)["max_tokens"] == 5
    assert cap({**BASE, "max_tokens": None}, Caps(max_tokens=5), friendli=True)["max_tokens"] == 5


def test_cap_replaces_max_total_tokens() -> None:
    body = {"model": "m", "tokens": [1, 2], "max_total_tokens": 4000}
    capped = cap(body, Caps(max_tokens=6), friendli=True)
    assert "max_total_tokens" not in capped and capped["max_tokens"] == 6
    capped = cap({**body, "max_total_tokens": None}, Caps(max_tokens=6), friendli=True)
    assert "max_total_tokens" not in capped and capped["max_tokens"] == 6


def test_cap_keeps_values_of_the_wrong_type() -> None:
    body = {**BASE, "max_tokens": "16", "n": "two", "max_total_tokens": "x"}
    assert cap(body, Caps(), friendli=True) == {**body}


def test_cap_takes_integral_floats_for_integers() -> None:
    assert cap({**BASE, "max_tokens": 400.0}, Caps(max_tokens=8), friendli=False)["max_tokens"] == 8


def test_servable_repairs_a_valid_body() -> None:
    body = {"model": "other", "prompt": [[9999, 3.0]], "best_of": 1, "n": 2,
            "stream_options": {}, "logit_bias": {"70000": 1}}
    fixed = servable(body, OPENAI, model="the-model")
    assert fixed["model"] == "the-model"
    assert fixed["prompt"] == [[9999 % 256, 3]]
    assert fixed["logit_bias"] == {str(70000 % 256): 1}
    assert not spec.cross_field_violations(fixed, "openai")


def test_servable_drops_what_unclaimed_features_allow_a_server_to_refuse() -> None:
    body = {**BASE, "suffix": "x", "best_of": 2, "echo": True, "logprobs": 1}
    fixed = servable(body, COMPATIBLE, model="m")
    assert "suffix" not in fixed and "best_of" not in fixed
    fixed = servable(body, OPENAI, model="m", features=OPENAI.features - {"echo_logprobs"})
    assert "echo" not in fixed and fixed["logprobs"] == 1


def test_servable_meets_friendli_cross_field_rules() -> None:
    body = {"model": "m", "tokens": [1], "n": 2, "seed": [7], "min_tokens": 1,
            "response_format": {"type": "json_object"}, "embedding_to_replace": [0.5]}
    fixed = servable(body, FRIENDLI, model="m")
    assert fixed["seed"] == [7, 7] and "embedding_to_replace" not in fixed
    assert not spec.cross_field_violations(fixed, "friendli")


def test_token_ids_are_brought_within_every_vocabulary() -> None:
    body = {**BASE, "prompt": [[464, 1361]], "echo": True}
    assert within_token_space(body)["prompt"] == [[464 % 256, 1361 % 256]]
    assert body["prompt"] == [[464, 1361]]  # a copy
    assert within_token_space({**BASE, "prompt": "Hi"})["prompt"] == "Hi"


def test_servable_meets_vllms_own_checks_without_lifting_the_cap() -> None:
    """vLLM refuses max_tokens 0 without echo and min_tokens above max_tokens: the repair
    keeps a bound (left out, max_tokens would run to the end of the model's context)."""
    vllm = spec.get_profile("vllm")
    fixed = servable({**BASE, "max_tokens": 0, "stream_options": {}}, vllm, model="m")
    assert fixed["max_tokens"] == 1 and fixed["stream_options"] == {}
    assert servable({**BASE, "max_tokens": 0, "echo": True}, vllm, model="m")["max_tokens"] == 0
    fixed = servable({**BASE, "prompt": ["", "a"], "add_special_tokens": False}, vllm, model="m")
    assert fixed["prompt"] == [" ", "a"]  # no BOS: an empty prompt is no token at all
    assert servable({**BASE, "prompt": ["", "a"]}, vllm, model="m")["prompt"] == ["", "a"]
    fixed = servable({**BASE, "max_tokens": 3, "min_tokens": 9}, vllm, model="m")
    assert fixed["max_tokens"] == 3 and fixed["min_tokens"] == 3
    assert not spec.cross_field_violations(fixed, "vllm")


@pytest.mark.parametrize("profile_name", ["openai", "openai-compatible", "friendli", "vllm"])
def test_capped_valid_bodies_stay_valid(profile_name: str) -> None:
    chosen = spec.get_profile(profile_name)
    caps = Caps(max_tokens=4, max_n=2)

    @settings(max_examples=60, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(completion_requests(chosen, max_tokens=64, max_n=5, max_prompts=5))
    def check(body: dict) -> None:
        sent = servable(cap(body, caps, friendli=profile_name == "friendli"), chosen, model="m")
        assert classify(sent, chosen).kind == "valid", (sent, classify(sent, chosen).why)
        assert sent["max_tokens"] <= 4 and sent.get("n", 1) <= 2

    check()
