"""Properties of the reference engine over any valid request (through the mock's wire layer).

For any valid body of any profile (``conformance.strategies``): the stream folds into the
non-streamed completion, a seed repeats the completion, no stop string reaches the text, every
logprob is a log probability in well-formed arrays, and usage adds up.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from properties_support import deterministic, stops_of

import spec
from conformance.strategies import completion_requests
from mockserver.wire import build_request, wire_of
from reference_engine import Completion, Engine, FinishEvent, TextEvent, UsageEvent

ENGINE = Engine()
PROFILES = [spec.get_profile(name) for name in ("openai", "openai-compatible", "friendli")]
SMALL = settings(max_examples=25, deadline=None, database=None,
                 suppress_health_check=list(HealthCheck))
LARGE = settings(max_examples=400, deadline=None, database=None,
                 suppress_health_check=list(HealthCheck))


def bodies(profile: spec.Profile) -> st.SearchStrategy[dict]:
    return st.tuples(completion_requests(profile, max_tokens=12), st.integers(0, 2**31 - 1)).map(
        lambda pair: deterministic(*pair))


def complete(body: dict, profile: spec.Profile) -> Completion:
    return ENGINE.complete(build_request(body, wire=wire_of(profile.name)))


def check_stream_equals_completion(body: dict, profile: spec.Profile) -> None:
    plain = complete(body, profile)
    texts: dict[int, str] = {}
    finishes: dict[int, str] = {}
    entries: dict[int, list] = {}
    usage = None
    for event in ENGINE.stream(build_request(body, wire=wire_of(profile.name))):
        if isinstance(event, (TextEvent, FinishEvent)):
            texts[event.index] = texts.get(event.index, "") + event.text
            entries.setdefault(event.index, []).extend(event.logprobs)
        if isinstance(event, FinishEvent):
            finishes[event.index] = event.finish_reason
        if isinstance(event, UsageEvent):
            usage = event.usage
    for choice in plain.choices:
        assert texts[choice.index] == choice.text
        assert finishes[choice.index] == choice.finish_reason
        if choice.logprobs is not None:
            assert tuple(entries[choice.index]) == choice.logprobs
    assert usage == plain.usage


def check_invariants(body: dict, profile: spec.Profile) -> None:
    first, again = complete(body, profile), complete(body, profile)
    assert first == again  # seeded (or greedy): the same bytes every time
    usage = first.usage
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert usage.completion_tokens == sum(c.completion_tokens for c in first.choices)
    limit = body.get("max_tokens")
    for choice in first.choices:
        if isinstance(limit, int):
            assert choice.completion_tokens <= limit
        # echo and suffix may carry a stop string; before min_tokens, stop strings do not end
        # generation (vLLM's rule, which the engine follows), so the text keeps them
        if not (body.get("echo") or body.get("suffix") or body.get("min_tokens")):
            for stop in stops_of(body):
                assert stop not in choice.text
        if choice.logprobs is None:
            continue
        top = body.get("logprobs")
        assert isinstance(top, int)
        offsets = [entry.offset for entry in choice.logprobs]
        assert offsets == sorted(offsets)
        for entry in choice.logprobs:
            if entry.logprob is None:
                continue  # the first echoed prompt token: nothing precedes it
            assert entry.logprob <= 0 and not math.isnan(entry.logprob)
            assert entry.top is not None and len(entry.top) <= top + 1
            assert all(value <= 0 for value in entry.top.values())


@pytest.mark.parametrize("profile", PROFILES, ids=lambda profile: profile.name)
def test_stream_equals_completion(profile: spec.Profile) -> None:
    SMALL(given(bodies(profile))(lambda body: check_stream_equals_completion(body, profile)))()


@pytest.mark.parametrize("profile", PROFILES, ids=lambda profile: profile.name)
def test_seeded_usage_stop_and_logprob_invariants(profile: spec.Profile) -> None:
    SMALL(given(bodies(profile))(lambda body: check_invariants(body, profile)))()


@pytest.mark.nightly  # the same properties run small in the default suite
@pytest.mark.parametrize("profile", PROFILES, ids=lambda profile: profile.name)
def test_engine_properties_at_length(profile: spec.Profile) -> None:
    def both(body: dict) -> None:
        check_stream_equals_completion(body, profile)
        check_invariants(body, profile)

    LARGE(given(bodies(profile))(both))()
