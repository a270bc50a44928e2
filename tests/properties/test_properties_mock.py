"""Properties of the mock over HTTP, for any request the strategies draw.

For any valid body: 200, the stream (ending in ``[DONE]``) joins into the non-streamed texts and
finish reasons, usage adds up and streamed usage equals non-streamed usage. For any invalid body:
the profile's 4xx with the profile's error envelope, streamed or not.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from properties_support import deterministic, fold_sse

import spec
from conformance.contract.validity import classify
from conformance.strategies import InvalidRequest, completion_requests, invalid_completion_requests
from conformance.target.embedded import EmbeddedMock

PROFILES = [spec.get_profile(name) for name in ("openai", "openai-compatible", "friendli")]
SMALL = settings(max_examples=15, deadline=None, database=None,
                 suppress_health_check=list(HealthCheck))
LARGE = settings(max_examples=300, deadline=None, database=None,
                 suppress_health_check=list(HealthCheck))
SESSION = requests.Session()


def url_of(mock: EmbeddedMock, profile: spec.Profile) -> str:
    return mock.url_for(profile) + "/completions"


def post(url: str, body: Any) -> requests.Response:
    return SESSION.post(url, data=json.dumps(body), timeout=60,
                        headers={"Content-Type": "application/json"})


def check_valid(mock: EmbeddedMock, profile: spec.Profile, body: dict) -> None:
    url = url_of(mock, profile)
    plain = post(url, body)
    assert plain.status_code == 200, plain.text
    answer = plain.json()
    usage = answer["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    options = {"include_usage": True} if profile.claims("include_usage") else None
    streamed = post(url, {**body, "stream": True, "stream_options": options})
    assert streamed.status_code == 200, streamed.text
    assert streamed.headers["Content-Type"].startswith("text/event-stream")
    folded = fold_sse(streamed.content)
    assert folded.done
    for choice in answer["choices"]:
        assert folded.texts.get(choice["index"], "") == choice["text"]
        assert folded.finish[choice["index"]] == choice["finish_reason"]
    if options:
        assert folded.usage == usage


def check_invalid(mock: EmbeddedMock, chosen: spec.Profile, case: InvalidRequest,
                  stream: bool) -> None:
    body = case.body
    if stream and isinstance(body, dict) and classify({**body, "stream": True}, chosen).invalid:
        body = {**body, "stream": True}  # the same mistake, streamed
    answer = post(url_of(mock, chosen), body)
    assert answer.status_code in chosen.invalid_request_statuses, (case, answer.text)
    assert answer.headers["Content-Type"].startswith("application/json")
    envelope = answer.json()
    errors = list(chosen.validator("error").iter_errors(envelope))
    assert not errors, (envelope, errors[0].message)


def valid_bodies(profile: spec.Profile) -> st.SearchStrategy[dict]:
    return st.tuples(completion_requests(profile, max_tokens=8, stream=False),
                     st.integers(0, 2**31 - 1)).map(lambda pair: deterministic(*pair))


@pytest.mark.parametrize("profile", PROFILES, ids=lambda profile: profile.name)
def test_valid_requests_stream_as_they_complete(live_mock: EmbeddedMock,
                                                 profile: spec.Profile) -> None:
    SMALL(given(valid_bodies(profile))(lambda body: check_valid(live_mock, profile, body)))()


@pytest.mark.parametrize("profile", PROFILES, ids=lambda profile: profile.name)
def test_invalid_requests_get_the_profile_error(live_mock: EmbeddedMock,
                                                 profile: spec.Profile) -> None:
    SMALL(given(invalid_completion_requests(profile), st.booleans())(
        lambda case, stream: check_invalid(live_mock, profile, case, stream)))()


@pytest.mark.nightly  # the same properties run small in the default suite
@pytest.mark.parametrize("profile", PROFILES, ids=lambda profile: profile.name)
def test_mock_properties_at_length(live_mock: EmbeddedMock,
                                                 profile: spec.Profile) -> None:
    LARGE(given(valid_bodies(profile))(lambda body: check_valid(live_mock, profile, body)))()
    LARGE(given(invalid_completion_requests(profile), st.booleans())(
        lambda case, stream: check_invalid(live_mock, profile, case, stream)))()
