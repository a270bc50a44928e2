"""Invalid input gets a clear 4xx with the error envelope naming the field; never a 5xx.

Spec: the 400 / 413 / 415 / 422 / 404 responses of ``spec/completions.yaml`` and the profiles'
``errors`` (400 on OpenAI's route, 422 on FriendliAI's).
"""

from __future__ import annotations

from typing import Any

import pytest
from mock_live import MODEL, LiveServer

import spec

OPENAI = "/v1/completions"
FRIENDLI = "/dedicated/v1/completions"
BIG = 2049


def ok(**fields: Any) -> dict[str, Any]:
    return {"model": MODEL, "prompt": "Hello", "max_tokens": 2, **fields}


def friendli(**fields: Any) -> dict[str, Any]:
    return {"model": MODEL, "prompt": "Hello", "max_tokens": 2, **fields}


BODY_CASES: list[tuple[str, str, Any, int, str | None, str]] = [
    # (id, path, body, status, param, code)
    ("missing-model", OPENAI, {"prompt": "x"}, 400, "model", "missing_required_parameter"),
    ("missing-prompt", OPENAI, {"model": MODEL}, 400, "prompt", "missing_required_parameter"),
    ("unknown-field", OPENAI, ok(foo=1), 400, "foo", "unknown_parameter"),
    ("not-an-object", OPENAI, [1, 2], 400, None, "invalid_type"),
    ("null-body", OPENAI, None, 400, None, "invalid_type"),
    ("prompt-null", OPENAI, ok(prompt=None), 400, "prompt", "invalid_value"),
    ("prompt-empty-list", OPENAI, ok(prompt=[]), 400, "prompt", "invalid_value"),
    ("prompt-mixed", OPENAI, ok(prompt=[1, "a"]), 400, "prompt", "invalid_value"),
    ("prompt-negative-id", OPENAI, ok(prompt=[-1]), 400, "prompt", "invalid_value"),
    ("prompt-id-out-of-vocab", OPENAI, ok(prompt=[10**6]), 400, "prompt", "invalid_token_id"),
    ("model-empty", OPENAI, ok(model=""), 400, "model", "invalid_value"),
    ("model-unknown", OPENAI, ok(model="gpt-4"), 404, "model", "model_not_found"),
    ("temperature-high", OPENAI, ok(temperature=3), 400, "temperature", "invalid_value"),
    ("temperature-string", OPENAI, ok(temperature="hot"), 400, "temperature", "invalid_type"),
    ("top-p-high", OPENAI, ok(top_p=1.5), 400, "top_p", "invalid_value"),
    ("n-zero", OPENAI, ok(n=0), 400, "n", "invalid_value"),
    ("n-float", OPENAI, ok(n=1.5), 400, "n", "invalid_type"),
    ("n-bool", OPENAI, ok(n=True), 400, "n", "invalid_type"),
    ("logprobs-six", OPENAI, ok(logprobs=6), 400, "logprobs", "invalid_value"),
    ("max-tokens-negative", OPENAI, ok(max_tokens=-1), 400, "max_tokens", "invalid_value"),
    ("max-tokens-over-context", OPENAI, ok(max_tokens=BIG), 400, "max_tokens",
     "context_length_exceeded"),
    ("prompt-too-long", OPENAI, ok(prompt=[1] * BIG), 400, "prompt", "context_length_exceeded"),
    ("stop-five", OPENAI, ok(stop=["a", "b", "c", "d", "e"]), 400, "stop", "invalid_value"),
    ("stop-empty-string", OPENAI, ok(stop=[""]), 400, "stop", "invalid_value"),
    ("penalty-high", OPENAI, ok(presence_penalty=2.5), 400, "presence_penalty", "invalid_value"),
    ("logit-bias-key", OPENAI, ok(logit_bias={"abc": 1}), 400, "logit_bias", "invalid_value"),
    ("logit-bias-value", OPENAI, ok(logit_bias={"1": 101}), 400, "logit_bias", "invalid_value"),
    ("logit-bias-out-of-vocab", OPENAI, ok(logit_bias={"999999": 1}), 400, "logit_bias",
     "invalid_token_id"),
    ("best-of-below-n", OPENAI, ok(best_of=1, n=2), 400, "best_of", "invalid_value"),
    ("best-of-streamed", OPENAI, ok(best_of=2, stream=True), 400, "best_of", "invalid_value"),
    ("stream-options-without-stream", OPENAI, ok(stream_options={"include_usage": True}), 400,
     "stream_options", "invalid_value"),
    ("seed-too-big", OPENAI, ok(seed=2**63), 400, "seed", "invalid_value"),
    ("echo-string", OPENAI, ok(echo="yes"), 400, "echo", "invalid_type"),
    ("friendli-prompt-and-tokens", FRIENDLI, friendli(tokens=[1]), 422, "prompt", "invalid_value"),
    ("friendli-neither", FRIENDLI, {"model": MODEL}, 422, "prompt", "invalid_value"),
    ("friendli-unknown-field", FRIENDLI, friendli(echo=True), 422, "echo", "unknown_parameter"),
    ("friendli-stop-string", FRIENDLI, friendli(stop="x"), 422, "stop", "invalid_type"),
    ("friendli-seed-list-length", FRIENDLI, friendli(seed=[1, 2]), 422, "seed", "invalid_value"),
    ("friendli-max-both", FRIENDLI, friendli(max_total_tokens=5), 422, "max_tokens",
     "invalid_value"),
    ("friendli-min-both", FRIENDLI, friendli(min_tokens=1, min_total_tokens=5), 422, "min_tokens",
     "invalid_value"),
    ("friendli-min-tokens-json", FRIENDLI,
     friendli(min_tokens=1, response_format={"type": "json_object"}), 422, "min_tokens",
     "invalid_value"),
    ("friendli-embedding-pair", FRIENDLI, friendli(embedding_to_replace=[0.5]), 422,
     "embedding_to_replace", "invalid_value"),
    ("friendli-embedding-unsupported", FRIENDLI,
     friendli(embedding_to_replace=[0.5], token_index_to_replace=[0]), 422,
     "embedding_to_replace", "unsupported_parameter"),
    ("friendli-encoder", FRIENDLI, friendli(encoder_no_repeat_ngram=3), 422,
     "encoder_no_repeat_ngram", "unsupported_parameter"),
    ("friendli-stop-tokens-shape", FRIENDLI, friendli(stop_tokens=[[1]]), 422, "stop_tokens",
     "invalid_type"),
    ("friendli-token-out-of-vocab", FRIENDLI, {"model": MODEL, "tokens": [10**6]}, 422, "tokens",
     "invalid_token_id"),
    ("friendli-max-total-below-prompt", FRIENDLI, {"model": MODEL, "tokens": [1, 2, 3],
     "max_total_tokens": 2}, 422, "max_total_tokens", "context_length_exceeded"),
    ("friendli-model-unknown", FRIENDLI, friendli(model="other"), 404, "model", "model_not_found"),
    ("friendli-response-format", FRIENDLI, friendli(response_format={"type": "xml"}), 422,
     "response_format", "invalid_value"),
]


@pytest.mark.parametrize(
    ("path", "body", "status", "param", "code"),
    [case[1:] for case in BODY_CASES],
    ids=[case[0] for case in BODY_CASES],
)
def test_invalid_bodies(server: LiveServer, path: str, body: Any, status: int,
                        param: str | None, code: str) -> None:
    reply = server.post(path, raw=b"null", headers={"Content-Type": "application/json"}) \
        if body is None else server.post(path, body)
    assert (reply.status, reply.error["param"], reply.error["code"]) == (status, param, code), \
        reply.data
    spec.get_profile("openai").validator("error").validate(reply.json())
    assert reply.error["message"] and reply.content_type == "application/json"


RAW_CASES: list[tuple[str, bytes, dict[str, str], int, str]] = [
    ("malformed-json", b'{"model": ', {}, 400, "invalid_json"),
    ("trailing-garbage", b'{"model": "m"} x', {}, 400, "invalid_json"),
    ("nan", b'{"model": "m", "prompt": "x", "temperature": NaN}', {}, 400, "invalid_json"),
    ("empty-body", b"", {}, 400, "invalid_json"),
    ("invalid-utf8", b'{"model": "\xff"}', {}, 400, "invalid_encoding"),
    ("lone-surrogate", b'{"model": "m", "prompt": "\\ud800"}', {}, 400, "invalid_encoding"),
    ("deep-nesting", b"[" * 100_000 + b"]" * 100_000, {}, 400, "invalid_json"),
    # deep enough to parse, too deep for what walks bodies afterwards (once a RecursionError 500)
    ("deep-stream-options", b'{"model": "m", "prompt": "x", "stream": true, "stream_options": '
     + b'{"a": ' * 600 + b"1" + b"}" * 601, {}, 400, "invalid_json"),
    ("gzip-that-is-not", b'{"model": "m", "prompt": "x"}', {"Content-Encoding": "gzip"}, 400,
     "invalid_encoding"),
    ("form-encoded", b"model=m", {"Content-Type": "application/x-www-form-urlencoded"}, 415,
     "unsupported_media_type"),
    ("no-content-type", b"{}", {"Content-Type": ""}, 415, "unsupported_media_type"),
    ("latin1-charset", b"{}", {"Content-Type": "application/json; charset=latin-1"}, 415,
     "unsupported_media_type"),
]


@pytest.mark.parametrize(
    ("raw", "headers", "status", "code"),
    [case[1:] for case in RAW_CASES],
    ids=[case[0] for case in RAW_CASES],
)
def test_invalid_payloads(server: LiveServer, raw: bytes, headers: dict[str, str], status: int,
                          code: str) -> None:
    sent = {"Content-Type": "application/json", **headers}
    reply = server.post(OPENAI, raw=raw, headers=sent)
    assert (reply.status, reply.error["code"]) == (status, code), reply.data


def test_friendli_syntax_errors_are_422(server: LiveServer) -> None:
    reply = server.post(FRIENDLI, raw=b"{", headers={"Content-Type": "application/json"})
    assert (reply.status, reply.error["code"]) == (422, "invalid_json")
    schema = b'{"type": "object", "properties": {"a": ' * 300 + b"{}" + b"}}" * 300
    deep = (b'{"model": "m", "prompt": "x", "response_format": {"type": "json_schema", '
            b'"json_schema": {"schema": ' + schema + b"}}}")
    reply = server.post(FRIENDLI, raw=deep, headers={"Content-Type": "application/json"})
    assert (reply.status, reply.error["code"]) == (422, "invalid_json")
    garbled = server.post(FRIENDLI, raw=b"{}", headers={"Content-Type": "application/json",
                                                       "Content-Encoding": "gzip"})
    assert (garbled.status, garbled.error["code"]) == (422, "invalid_encoding")


def test_bodies_nested_a_few_levels_are_served(server: LiveServer) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "object", "properties": {
        "b": {"type": "array", "items": {"type": "integer"}}}}}}
    reply = server.post(FRIENDLI, {"model": MODEL, "prompt": "x", "max_tokens": 2,
                                   "response_format": {"type": "json_schema",
                                                       "json_schema": {"schema": schema}}})
    assert reply.status == 200, reply.data


def test_oversized_body_is_413(make_server: Any) -> None:
    live = make_server(max_body_bytes=1000)
    assert live.post(OPENAI, ok(prompt="x" * 2000)).status == 413
    assert live.post(OPENAI, ok(prompt="x" * 10)).status == 200


def test_default_body_limit_is_one_mebibyte(server: LiveServer) -> None:
    reply = server.post(OPENAI, ok(prompt="x" * (1 << 20)))
    assert (reply.status, reply.error["code"]) == (413, "request_too_large")


def test_streamed_invalid_input_is_rejected_before_any_event(server: LiveServer) -> None:
    reply = server.post(OPENAI, ok(prompt=[1] * BIG, stream=True))
    assert reply.status == 400 and reply.content_type == "application/json"
    assert reply.error["code"] == "context_length_exceeded"


def test_valid_edge_values_are_accepted(server: LiveServer) -> None:
    for body in (ok(max_tokens=0, echo=True), ok(top_p=0), ok(n=2, best_of=2), ok(logprobs=0),
                 ok(prompt=[[1, 2], [3]]), ok(seed=-(2**63)), ok(stop=None, stream=False),
                 ok(stream_options=None), ok(temperature=2, top_p=1, max_tokens=1)):
        assert server.post(OPENAI, body).status == 200, body
    for body in (friendli(model=f"{MODEL}:adapter"), {"model": MODEL, "tokens": [1], "n": 2,
                 "seed": [3, 4], "max_total_tokens": 4}, friendli(encoder_no_repeat_ngram=1,
                 embedding_to_replace=[], token_index_to_replace=[])):
        assert server.post(FRIENDLI, body).status == 200, body


@pytest.mark.parametrize("path", [OPENAI, FRIENDLI])
def test_integral_floats_are_served_as_the_integers_they_are(server: LiveServer,
                                                             path: str) -> None:
    # JSON Schema counts 3.0 as an integer: the same seed, n and prompt ids, the same answer.
    prompt = {"tokens": [464, 1136]} if path == FRIENDLI else {"prompt": [464, 1136]}
    as_floats = {"tokens": [464.0, 1136.0]} if path == FRIENDLI else {"prompt": [464.0, 1136.0]}
    ints = {"model": MODEL, "max_tokens": 4, "n": 2, "seed": 3, "temperature": 1, **prompt}
    floats = {**ints, "max_tokens": 4.0, "n": 2.0, "seed": 3.0, "temperature": 1.0,
              **as_floats}
    answers = [server.post(path, body).json() for body in (ints, floats)]
    for answer in answers:
        answer.pop("id"), answer.pop("created", None)
    assert answers[0] == answers[1]
    assert len(answers[0]["choices"]) == 2


def test_server_keeps_answering_after_errors(server: LiveServer) -> None:
    for _ in range(3):
        assert server.post(OPENAI, ok(logprobs=9)).status == 400
    assert server.post(OPENAI, ok()).status == 200
