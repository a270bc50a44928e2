"""Authentication, rate limits and simulated latency.

Latency is checked by order and headers only (no timed assertions): the seeded RNG gives the
same delays for the same seed, and a stream still arrives complete and in order.
"""

from __future__ import annotations

from typing import Any

import pytest
from mock_live import MODEL

from mockserver.config import MockConfig, api_keys_from_env
from mockserver.errors import ApiError
from mockserver.http.latency import Latency
from mockserver.http.ratelimit import RateLimiter

BODY = {"model": MODEL, "prompt": "Hi", "max_tokens": 2}


# -- authentication -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("authorization", "status"),
    [
        (None, 401),
        ("Bearer wrong", 401),
        ("Basic sk-one", 401),
        ("Bearer sk-one", 200),
        ("bearer sk-two", 200),
    ],
)
def test_api_keys(make_server: Any, authorization: str | None, status: int) -> None:
    live = make_server(api_keys=("sk-one", "sk-two"))
    headers = {"Authorization": authorization} if authorization else {}
    reply = live.post("/v1/completions", BODY, headers=headers)
    assert reply.status == status
    if status == 401:
        assert reply.error["code"] == "invalid_api_key"
        assert reply.headers["www-authenticate"] == "Bearer"
    assert live.call("GET", "/v1/models", headers=headers).status == status


def test_public_routes_need_no_key(make_server: Any) -> None:
    live = make_server(api_keys=("sk-one",))
    for path in ("/health", "/openapi.yaml", "/openapi.json", "/mock/faults",
                 "/mock/variants"):
        assert live.call("GET", path).status == 200, path


def test_keys_from_the_environment() -> None:
    assert api_keys_from_env({"MOCKSERVER_API_KEYS": " a, ,b "}) == ("a", "b")
    assert api_keys_from_env({}) == ()


# -- rate limits --------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_request_bucket_refills() -> None:
    clock = Clock()
    limiter = RateLimiter(rpm=2, tpm=None, clock=clock)
    first = limiter.admit("k")
    assert first.headers()["x-ratelimit-remaining-requests"] == "1"
    limiter.admit("k")
    with pytest.raises(ApiError) as refused:
        limiter.admit("k")
    assert refused.value.status == 429 and refused.value.type == "rate_limit_error"
    assert refused.value.headers["Retry-After"] == "30"
    limiter.admit("other")  # buckets are per caller
    clock.now = 30.0
    limiter.admit("k")


def test_token_bucket_charges_usage() -> None:
    clock = Clock()
    limiter = RateLimiter(rpm=None, tpm=60, clock=clock)
    admission = limiter.admit("k")
    limiter.charge(admission, 90)
    with pytest.raises(ApiError) as refused:
        limiter.admit("k")
    assert refused.value.headers["Retry-After"] == "31"
    assert refused.value.headers["x-ratelimit-remaining-tokens"] == "0"
    clock.now = 31.0
    assert limiter.admit("k").headers()["x-ratelimit-limit-tokens"] == "60"


def test_rate_limits_over_http(make_server: Any) -> None:
    live = make_server(rate_limit_rpm=3, rate_limit_tpm=100_000)
    replies = [live.post("/v1/completions", BODY) for _ in range(4)]
    assert [r.status for r in replies] == [200, 200, 200, 429]
    for reply in replies:
        for suffix in ("requests", "tokens"):
            for kind in ("limit", "remaining", "reset"):
                assert f"x-ratelimit-{kind}-{suffix}" in reply.headers, (kind, suffix)
    assert [r.headers["x-ratelimit-remaining-requests"] for r in replies] == ["2", "1", "0", "0"]
    refused = replies[-1]
    assert refused.error["type"] == "rate_limit_error" and refused.error["code"] == \
        "rate_limit_exceeded"
    assert int(refused.headers["retry-after"]) >= 1
    assert live.call("GET", "/health").status == 200  # not limited, and no headers
    assert "x-ratelimit-limit-requests" not in live.call("GET", "/health").headers


def test_rotating_tokens_share_the_client_bucket_without_keys(make_server: Any) -> None:
    """Without --api-key a Bearer token is no identity (anyone can mint a new one per request):
    the client address is the caller, so rotating tokens does not escape the limit."""
    live = make_server(rate_limit_rpm=2)
    statuses = [live.post("/v1/completions", BODY,
                          headers={"Authorization": f"Bearer random-{i}"}).status
                for i in range(3)]
    assert statuses == [200, 200, 429]


def test_configured_keys_have_a_bucket_each(make_server: Any) -> None:
    live = make_server(rate_limit_rpm=1, api_keys=("sk-one", "sk-two"))
    one, two = ({"Authorization": "Bearer sk-one"}, {"Authorization": "Bearer sk-two"})
    assert live.post("/v1/completions", BODY, headers=one).status == 200
    assert live.post("/v1/completions", BODY, headers=one).status == 429
    streamed = live.post("/v1/completions", {**BODY, "stream": True}, headers=two)
    assert streamed.status == 200 and "x-ratelimit-limit-requests" in streamed.headers
    assert live.post("/v1/completions", BODY, headers=two).status == 429


def test_token_limit_over_http(make_server: Any) -> None:
    live = make_server(rate_limit_tpm=5)
    assert live.post("/v1/completions", BODY).status == 200  # 2 + 2 tokens
    assert live.post("/v1/completions", BODY).status == 200  # the bucket still has 1
    refused = live.post("/v1/completions", BODY)
    assert refused.status == 429 and "tokens per minute" in refused.error["message"]


# -- latency ------------------------------------------------------------------------------


def test_latency_draws_are_seeded() -> None:
    first = Latency(ttft_ms=100, itl_ms=10, jitter_ms=5, seed=7)
    second = Latency(ttft_ms=100, itl_ms=10, jitter_ms=5, seed=7)
    draws = [first.first_token(), first.next_token(), first.whole(4)]
    assert draws == [second.first_token(), second.next_token(), second.whole(4)]
    assert all(d >= 0 for d in draws)
    assert 0.095 <= draws[0] <= 0.105
    assert Latency(itl_ms=10, seed=1).whole(0) == 0.0
    assert Latency().whole(100) == 0.0 and not Latency().enabled


def test_jitter_never_goes_negative() -> None:
    latency = Latency(itl_ms=1, jitter_ms=50, seed=3)
    assert min(latency.next_token() for _ in range(200)) == 0.0


def test_streams_with_latency_arrive_whole_and_in_order(make_server: Any) -> None:
    live = make_server(ttft_ms=5, itl_ms=1, jitter_ms=1, latency_seed=4)
    fields = {**BODY, "max_tokens": 5, "seed": 1, "temperature": 0}
    streamed = live.post("/v1/completions", {**fields, "stream": True})
    texts = "".join(c["choices"][0]["text"] for c in streamed.chunks()[:-1])
    assert texts == live.post("/v1/completions", fields).json()["choices"][0]["text"]
    assert streamed.chunks()[-1] == "[DONE]"


def test_config_errors_name_the_flag() -> None:
    cases = (
        ({"ttft_ms": -1}, "--ttft-ms"), ({"rate_limit_rpm": 0}, "--rate-limit-rpm"),
        ({"chaos_probability": 2}, "--chaos-probability"), ({"port": -1}, "--port"),
        ({"workers": 0}, "--workers"), ({"max_body_bytes": 0}, "--max-body-bytes"),
        ({"api_keys": ("",)}, "--api-key"), ({"read_timeout": 0}, "--read-timeout"),
        ({"idle_timeout": -1}, "--idle-timeout"), ({"request_budget": 0}, "--request-budget"),
        ({"max_prompt_chars": 0}, "--max-prompt-chars"),
    )
    for kwargs, flag in cases:
        with pytest.raises(ValueError, match=flag):
            MockConfig(**kwargs)  # type: ignore[arg-type]
