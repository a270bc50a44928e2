"""The strict mock's completions: shapes, stream semantics, stream == non-stream.

Spec: ``CompletionResponse``, ``CompletionChunk``, ``UsageChunk`` and the FriendliAI variants
in ``spec/completions.yaml``; "Joining every event's text per choice gives exactly the
non-streamed text" (reference_engine.results).
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from typing import Any

import pytest
from mock_live import ENGINE, MODEL, LiveServer, Reply

import spec
from mockserver import MockConfig, create_app
from reference_engine import Engine, GenerationRequest

OPENAI = spec.get_profile("openai")
FRIENDLI = spec.get_profile("friendli")


def body(**fields: Any) -> dict[str, Any]:
    return {"model": MODEL, "prompt": "The Python language", "max_tokens": 6, "seed": 3,
            **fields}


def joined(reply: Reply) -> dict[int, tuple[str, list[str], str | None]]:
    """Per choice index: the joined text, the joined logprob tokens, the finish_reason."""
    out: dict[int, tuple[str, list[str], str | None]] = {}
    for chunk in reply.chunks():
        if chunk == "[DONE]":
            continue
        for choice in chunk["choices"]:
            text, tokens, reason = out.get(choice["index"], ("", [], None))
            logprobs = choice.get("logprobs") or {}
            out[choice["index"]] = (text + choice["text"], tokens + logprobs.get("tokens", []),
                                    choice["finish_reason"] or reason)
    return out


def test_non_streamed_shape(server: LiveServer) -> None:
    reply = server.post("/v1/completions", body(n=2, prompt=["A", "B"], logprobs=2))
    assert reply.status == 200 and reply.content_type == "application/json"
    data = reply.json()
    OPENAI.validator("response").validate(data)
    assert data["id"].startswith("cmpl-") and data["object"] == "text_completion"
    assert data["system_fingerprint"] == ENGINE.fingerprint
    assert [c["index"] for c in data["choices"]] == [0, 1, 2, 3]
    usage = data["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


@pytest.mark.parametrize("include_usage", [True, False, None])
def test_stream_shape(server: LiveServer, include_usage: bool | None) -> None:
    options = None if include_usage is None else {"include_usage": include_usage}
    reply = server.post("/v1/completions", body(stream=True, stream_options=options, n=2))
    assert reply.status == 200
    assert reply.headers["content-type"] == "text/event-stream"
    assert reply.headers["cache-control"] == "no-cache"
    assert reply.data.endswith(b"data: [DONE]\n\n")
    chunks = reply.chunks()
    OPENAI.validator("event_stream").validate(chunks)
    assert chunks[-1] == "[DONE]" and chunks.count("[DONE]") == 1
    usage_chunks = [c for c in chunks[:-1] if c["choices"] == []]
    assert len(usage_chunks) == (1 if include_usage else 0)
    assert len({c["id"] for c in chunks[:-1]}) == 1
    for chunk in chunks[:-1]:
        if chunk["choices"]:
            assert ("usage" in chunk) == bool(include_usage) and chunk.get("usage") is None
    finishes = [c for c in chunks[:-1] if c["choices"] and c["choices"][0]["finish_reason"]]
    assert sorted(c["choices"][0]["index"] for c in finishes) == [0, 1]


@pytest.mark.parametrize(
    "fields",
    [
        {"temperature": 0},
        {"n": 2, "prompt": ["A", "B"], "logprobs": 3},
        {"echo": True, "logprobs": 1},
        {"stop": [" "], "temperature": 0, "max_tokens": 30},
        {"suffix": " END"},
        {"prompt": [[464, 1361], [13]], "echo": True},
    ],
    ids=["greedy", "prompts-n-logprobs", "echo-logprobs", "stop", "suffix", "token-prompts"],
)
def test_stream_equals_non_stream(server: LiveServer, fields: dict[str, Any]) -> None:
    whole = server.post("/v1/completions", body(**fields)).json()
    streamed = joined(server.post("/v1/completions", body(stream=True, **fields)))
    for choice in whole["choices"]:
        text, tokens, reason = streamed[choice["index"]]
        assert text == choice["text"]
        assert reason == choice["finish_reason"]
        if choice["logprobs"] is not None:
            assert tokens == choice["logprobs"]["tokens"]


def test_stream_usage_equals_non_stream_usage(server: LiveServer) -> None:
    fields = body(n=2, prompt=["A", "B"])
    whole = server.post("/v1/completions", fields).json()
    streamed = server.post("/v1/completions", {**fields, "stream": True,
                                              "stream_options": {"include_usage": True}})
    assert streamed.chunks()[-2]["usage"] == whole["usage"]


def test_echo_and_max_tokens_zero(server: LiveServer) -> None:
    data = server.post("/v1/completions", body(echo=True, max_tokens=0, logprobs=0)).json()
    choice = data["choices"][0]
    assert choice["text"] == "The Python language"
    assert choice["logprobs"]["token_logprobs"][0] is None
    assert data["usage"]["completion_tokens"] == 0


def test_stop_string_is_not_returned(server: LiveServer) -> None:
    free = server.post("/v1/completions", body(temperature=0, max_tokens=20)).json()
    text = free["choices"][0]["text"]
    stop = text[3:6]
    stopped = server.post("/v1/completions", body(temperature=0, max_tokens=20, stop=stop))
    choice = stopped.json()["choices"][0]
    assert choice["text"] == text[: text.find(stop)] and choice["finish_reason"] == "stop"


def test_friendli_non_streamed(server: LiveServer) -> None:
    reply = server.post("/dedicated/v1/completions",
                        {"model": MODEL, "tokens": [464, 1361], "max_tokens": 4, "n": 2,
                         "seed": [5, 6]})
    data = reply.json()
    FRIENDLI.validator("response").validate(data)
    assert [c["seed"] for c in data["choices"]] == [5, 6]
    assert all(len(c["tokens"]) == c_tokens for c, c_tokens in
               zip(data["choices"], [4, 4], strict=True) if c["finish_reason"] == "length")
    assert "created" not in data


def test_friendli_stream(server: LiveServer) -> None:
    reply = server.post("/dedicated/v1/completions",
                        {"model": MODEL, "prompt": "Hi", "max_tokens": 3, "seed": 1,
                         "stream": True, "stream_options": {"include_usage": True}})
    chunks = reply.chunks()
    FRIENDLI.validator("event_stream").validate(chunks)
    tokens = [c["choices"][0]["token"] for c in chunks if c != "[DONE]" and c["choices"]
              and c["choices"][0]["finish_reason"] is None]
    whole = server.post("/dedicated/v1/completions",
                        {"model": MODEL, "prompt": "Hi", "max_tokens": 3, "seed": 1}).json()
    assert tokens == whole["choices"][0]["tokens"]


def test_seeded_runs_repeat(server: LiveServer) -> None:
    first = server.post("/v1/completions", body(temperature=1.0, n=3)).json()["choices"]
    second = server.post("/v1/completions", body(temperature=1.0, n=3)).json()["choices"]
    assert [c["text"] for c in first] == [c["text"] for c in second]


def test_concurrent_streams_interleave(server: LiveServer) -> None:
    """A long stream does not hold the loop: a short request finishes while it runs."""
    payload = json.dumps({"model": MODEL, "prompt": "The", "max_tokens": 2000,
                          "min_tokens": 2000, "stream": True}).encode()
    head = (b"POST /dedicated/v1/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(payload))
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(head + payload)
        received = b""
        while b"data: " not in received:
            received += sock.recv(65536)
        long_start = short_start = time.monotonic()
        assert server.post("/v1/completions", body(max_tokens=1)).status == 200
        short_time = time.monotonic() - short_start
        while chunk := sock.recv(65536):
            received += chunk
        long_time = time.monotonic() - long_start
    assert b"data: [DONE]" in received
    assert short_time < long_time / 2, (short_time, long_time)


class RecordingEngine(Engine):
    """The real engine, remembering whether each stream's generator was closed."""

    def __init__(self) -> None:
        super().__init__()
        self.closed: list[bool] = []

    def stream(self, request: GenerationRequest):  # type: ignore[no-untyped-def]
        events = super().stream(request)
        slot = len(self.closed)
        self.closed.append(False)

        def tracked():  # type: ignore[no-untyped-def]
            try:
                yield from events
            finally:
                self.closed[slot] = True

        return tracked()


def test_client_disconnect_stops_generation() -> None:
    engine = RecordingEngine()
    with LiveServer(app=create_app(MockConfig(itl_ms=20), engine=engine)) as live:
        request = (
            b"POST /dedicated/v1/completions HTTP/1.1\r\nHost: x\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
        )
        payload = (b'{"model": "%s", "prompt": "The", "max_tokens": 2000, "stream": true}'
                   % MODEL.encode())
        with socket.create_connection(("127.0.0.1", live.port)) as sock:
            sock.sendall(request % (len(payload), payload))
            received = b""
            while b"data: " not in received:
                received += sock.recv(65536)
        deadline = time.monotonic() + 10
        while not (engine.closed and engine.closed[0]) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert engine.closed == [True]


def test_app_factory_in_process() -> None:
    """create_app works under a plain event loop too (aiohttp's own test server)."""
    from aiohttp.test_utils import TestClient, TestServer

    async def scenario() -> int:
        async with TestClient(TestServer(create_app(engine=ENGINE))) as client:
            response = await client.post("/v1/completions", json=body(max_tokens=1))
            return response.status

    assert asyncio.run(scenario()) == 200


def test_deterministic_results_are_cached(make_server: Any) -> None:
    from mockserver.http.state import CACHE

    live = make_server()
    cache = live.app[CACHE]
    seeded = body(n=2, logprobs=1)
    first = live.post("/v1/completions", seeded).json()
    second = live.post("/v1/completions", seeded).json()
    assert cache.hits == 1 and first["choices"] == second["choices"]
    stream_first = live.post("/v1/completions", {**seeded, "stream": True}).chunks()
    stream_second = live.post("/v1/completions", {**seeded, "stream": True}).chunks()
    assert cache.hits == 2
    assert [c["choices"] for c in stream_first[:-1]] == [c["choices"] for c in stream_second[:-1]]
    unseeded = {**seeded, "seed": None}
    live.post("/v1/completions", unseeded)
    live.post("/v1/completions", unseeded)
    assert cache.hits == 2


def test_cache_can_be_turned_off(make_server: Any) -> None:
    from mockserver.http.state import CACHE

    live = make_server(cache_entries=0)
    for _ in range(2):
        assert live.post("/v1/completions", body()).status == 200
    assert live.app[CACHE].hits == 0


class BrokenEngine(Engine):
    """An engine with a bug: the catch-all must still answer with the envelope."""

    def complete(self, request: GenerationRequest):  # type: ignore[no-untyped-def]
        raise RuntimeError("boom")

    def stream(self, request: GenerationRequest):  # type: ignore[no-untyped-def]
        def broken():  # type: ignore[no-untyped-def]
            yield from super(BrokenEngine, self).stream(request)
            raise RuntimeError("boom")

        return broken()


def test_unexpected_errors_get_the_500_envelope(caplog: pytest.LogCaptureFixture) -> None:
    with LiveServer(app=create_app(engine=BrokenEngine())) as live:
        reply = live.post("/v1/completions", body())
        assert reply.status == 500 and reply.error["type"] == "server_error"
        streamed = live.post("/v1/completions", body(stream=True))
        assert streamed.status == 200
        assert streamed.chunks()[-2]["error"]["type"] == "server_error"
        assert streamed.chunks()[-1] == "[DONE]"
    assert "boom" in caplog.text
