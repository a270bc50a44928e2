"""The public request strategies: valid by the contract, covering every coupled dimension."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spec
from conformance.contract.validity import classify
from conformance.strategies import (
    completion_requests,
    independent_samples,
    invalid_completion_requests,
    prompts,
    repeat_bans,
    scored_echoes,
    stop_requests,
    stop_sequences,
)

PROFILES = ("openai", "openai-compatible", "friendli")
OPENAI, FRIENDLI = spec.get_profile("openai"), spec.get_profile("friendli")
QUICK = settings(max_examples=60, deadline=None, database=None,
                 suppress_health_check=list(HealthCheck))


def draws(strategy: st.SearchStrategy, n: int = 300) -> list:
    found: list = []

    @settings(max_examples=n, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(value: object) -> None:
        found.append(value)

    collect()
    return found


@pytest.mark.parametrize("profile_name", PROFILES)
def test_valid_requests_are_valid_and_capped(profile_name: str) -> None:
    chosen = spec.get_profile(profile_name)

    @QUICK
    @given(completion_requests(chosen, model="m", max_tokens=5, max_n=2, max_prompts=2))
    def check(body: dict) -> None:
        assert classify(body, chosen).kind == "valid"
        assert body["model"] == "m" and 0 <= body["max_tokens"] <= 5
        assert body.get("n", 1) <= 2 and body.get("best_of") in (None, 1, 2, 3)
        prompt = body.get("prompt")
        if isinstance(prompt, list) and prompt and not isinstance(prompt[0], int):
            assert len(prompt) <= 2
        assert set(body) <= set(chosen.request_fields)

    check()


def test_every_coupled_dimension_is_combined() -> None:
    seen: Counter[str] = Counter()
    for body in draws(completion_requests(OPENAI), 200):
        streamed = body.get("stream") is True
        prompt = body["prompt"]
        listed = isinstance(prompt, list) and bool(prompt) and not isinstance(prompt[0], int)
        flags = {
            "stream": streamed, "n": body.get("n", 1) > 1, "prompt-list": listed,
            "echo": body.get("echo") is True, "logprobs": body.get("logprobs") is not None,
            "stop": body.get("stop") is not None, "seed": body.get("seed") is not None,
            "usage": (body.get("stream_options") or {}).get("include_usage") is True,
        }
        on = sorted(name for name, value in flags.items() if value)
        seen.update(on)
        seen.update(f"{a}+{b}" for i, a in enumerate(on) for b in on[i + 1:])
    for pair in ("n+stream", "n+prompt-list", "echo+logprobs", "stop+stream", "seed+stream",
                 "logprobs+stream", "prompt-list+stream", "n+usage", "echo+stream"):
        assert seen[pair] > 0, pair


def test_friendli_fields_are_generated() -> None:
    keys: Counter[str] = Counter()
    for body in draws(completion_requests(FRIENDLI), 150):
        keys.update(list(body))
        if isinstance(body.get("seed"), list):
            keys["seed-list"] += 1
    for name in ("tokens", "prompt", "bad_words", "bad_word_tokens", "stop_tokens", "eos_token",
                 "response_format", "min_tokens", "seed-list", "xtc_threshold"):
        assert keys[name] > 0, name


def test_prompt_and_stop_strategies_follow_the_profile() -> None:
    assert all(isinstance(stop, list) for stop in draws(stop_sequences(FRIENDLI), 50))
    assert any(isinstance(stop, str) for stop in draws(stop_sequences(OPENAI), 50))
    friendli_prompts = draws(prompts(FRIENDLI), 80)
    assert not any(isinstance(p, list) and p and isinstance(p[0], int) for p in friendli_prompts)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: completion_requests(OPENAI, max_tokens=0), "max_tokens=0 must be an integer >= 1"),
    (lambda: completion_requests(OPENAI, max_n=True), "max_n=True"),
    (lambda: completion_requests(OPENAI, stream="yes"), "stream='yes'"),
    (lambda: completion_requests(OPENAI, model=""), "model=''"),
    (lambda: prompts(OPENAI, max_prompts=0), "max_prompts=0"),
    (lambda: prompts(dataclasses.replace(OPENAI, name="unregistered")),
     "profile='unregistered' is a spec.Profile neither shipped nor loaded"),
])
def test_arguments_are_checked_eagerly(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("[", r"\[")):
        call()  # type: ignore[operator]


STRATEGIES = (completion_requests, invalid_completion_requests, prompts, stop_sequences,
              stop_requests, repeat_bans, scored_echoes, independent_samples)


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda strategy: strategy.__name__)
def test_a_name_is_refused_with_the_fix_in_the_message(strategy: Callable[..., object]) -> None:
    """The strategies took a name once: an old caller learns how to resolve it."""
    with pytest.raises(TypeError, match=re.escape("pass spec.get_profile('openai')")):
        strategy("openai")
    with pytest.raises(TypeError, match=re.escape("profile=42 must be a spec.Profile")):
        strategy(42)


@pytest.mark.parametrize("name", PROFILES)
def test_every_strategy_draws_what_the_profile_allows(name: str) -> None:
    """``completion_requests(spec.get_profile("openai"))`` is what a user writes after reading
    the ``spec`` docs: every body it draws is one the profile accepts."""
    profile = spec.get_profile(name)
    by_object = draws(completion_requests(profile, max_tokens=4), 40)
    validator = profile.validator("request")
    assert by_object and all(validator.is_valid(body) for body in by_object)
    assert draws(prompts(profile), 20) and draws(stop_sequences(profile), 20)
    invalid = draws(invalid_completion_requests(profile), 20)
    assert invalid and all(classify(case.body, profile).kind in ("schema", "cross-field")
                           for case in invalid)
