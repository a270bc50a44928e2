"""The mock's fast paths give the bytes of its plain paths.

Kept answers (a repeat of a deterministic non-streamed body) differ from a freshly rendered
answer in ``id`` and ``created`` only; streams rendered straight to bytes equal the chunk
dicts framed by ``sse``; the identity prefix is the start of the rendered body.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp import web
from mock_live import ENGINE, MODEL, LiveServer

from mockserver import MockConfig, create_app, sse
from mockserver.http import streaming
from mockserver.http.state import CACHE
from mockserver.http.streaming import YIELD_EVERY
from mockserver.wire import (
    Identity,
    WireOptions,
    build_request,
    completion_body,
    identity_prefix,
    stream_chunks,
    stream_frames,
)

OPENAI = "/v1/completions"
FRIENDLI = "/dedicated/v1/completions"
ID_OR_CREATED = re.compile(rb'"id":"cmpl-[0-9a-f]{32}"|"created":\d+')

BODIES: list[dict[str, Any]] = [
    {"prompt": "The Python language", "max_tokens": 6},
    {"prompt": "Hi", "max_tokens": 5, "n": 2, "logprobs": 2},
    {"prompt": ["One", "Two"], "max_tokens": 4, "stop": ["e", " "]},
    {"prompt": "caf\u00e9 \u2603 \"quoted\" \\ back", "max_tokens": 8, "temperature": 0},
    {"prompt": "The", "max_tokens": 7, "min_tokens": 3, "top_p": 0.5, "top_k": 20},
]
OPENAI_ONLY: list[dict[str, Any]] = [
    {"prompt": "The", "max_tokens": 4, "echo": True, "logprobs": 1, "suffix": " \u00e9nd\n"},
    {"prompt": [464, 1136], "max_tokens": 3, "best_of": 2, "n": 1},
]
FRIENDLI_ONLY: list[dict[str, Any]] = [
    {"tokens": [464, 1136], "max_tokens": 4, "stop_tokens": [{"tokens": [13]}]},
    {"prompt": "Hi", "max_tokens": 3, "forced_output_tokens": [198, 13]},
]


def cases() -> list[tuple[str, dict[str, Any]]]:
    out = [(path, body) for path in (OPENAI, FRIENDLI) for body in BODIES]
    out += [(OPENAI, body) for body in OPENAI_ONLY]
    out += [(FRIENDLI, body) for body in FRIENDLI_ONLY]
    return [(path, {"model": MODEL, "seed": 11, **body}) for path, body in out]


def without_identity(data: bytes) -> bytes:
    return ID_OR_CREATED.sub(b"", data)


@pytest.mark.parametrize(("path", "body"), cases())
def test_kept_answers_equal_rendered_ones_but_for_id_and_created(
    make_server: Any, path: str, body: dict[str, Any]
) -> None:
    live = make_server()
    first = live.post(path, body)
    assert first.status == 200, first.data
    second = live.post(path, body)
    third = live.post(path, body)
    assert live.app[CACHE].hits == 2
    assert second.data != first.data  # a fresh id
    for reply in (second, third):
        assert reply.status == 200
        assert reply.headers["content-type"] == first.headers["content-type"]
        assert without_identity(reply.data) == without_identity(first.data)
        kept, rendered = reply.json(), first.json()
        assert kept["id"] != rendered["id"] and re.fullmatch(r"cmpl-[0-9a-f]{32}", kept["id"])
        assert ("created" in kept) == ("created" in rendered) == (path == OPENAI)
        assert {**kept, "id": None, "created": None} == {**rendered, "id": None, "created": None}


def test_unseeded_and_bent_requests_are_not_answered_from_kept_answers(
    make_server: Any,
) -> None:
    live = make_server()
    seeded = {"model": MODEL, "prompt": "Hi", "max_tokens": 3, "seed": 1}
    live.post(OPENAI, seeded)
    bent = live.post(OPENAI, seeded, headers={"X-Mock-Fault": "object-wrong"})
    assert bent.json()["object"] != "text_completion"
    assert live.post(OPENAI, seeded).json()["object"] == "text_completion"
    unseeded = {"model": MODEL, "prompt": "Hi", "max_tokens": 3}
    hits = live.app[CACHE].hits
    live.post(OPENAI, unseeded)
    live.post(OPENAI, unseeded)
    assert live.app[CACHE].hits == hits
    # The same bytes on the other route are another request, with that route's answer.
    other = live.post(FRIENDLI, seeded).json()
    assert "created" not in other and "tokens" in other["choices"][0]


def test_kept_answers_still_check_the_media_type(make_server: Any) -> None:
    live = make_server()
    raw = json.dumps({"model": MODEL, "prompt": "Hi", "max_tokens": 2, "seed": 1}).encode()
    assert live.post(OPENAI, raw=raw, headers={"Content-Type": "application/json"}).status == 200
    assert live.post(OPENAI, raw=raw, headers={"Content-Type": "text/plain"}).status == 415


@pytest.mark.parametrize(("path", "body"), cases())
@pytest.mark.parametrize("include_usage", [False, True])
def test_streams_rendered_to_bytes_equal_framed_chunks(
    path: str, body: dict[str, Any], include_usage: bool
) -> None:
    if body.get("best_of"):
        pytest.skip("best_of > 1 cannot be streamed")
    wire = "openai" if path == OPENAI else "friendli"
    options = WireOptions.from_body(body, wire=wire)
    identity = Identity.new(model=MODEL,
                            system_fingerprint=ENGINE.fingerprint if wire == "openai" else None)
    events = list(ENGINE.stream(build_request(body, wire=wire)))
    kwargs = {"wire": wire, "include_usage": include_usage, "logprobs": options.logprobs,
              "suffix": options.suffix}
    expected = b"".join(f.data for f in sse.frames(stream_chunks(events, identity, **kwargs)))
    assert b"".join(stream_frames(events, identity, **kwargs)) == expected


@pytest.mark.parametrize("wire", ["openai", "friendli"])
def test_streams_rendered_to_bytes_survive_a_model_name_that_holds_a_placeholder(
    wire: str,
) -> None:
    # FriendliAI's adapter routes take any model name after the colon.
    identity = Identity("cmpl-x", 1, f"{MODEL}:{sse.slot(1)}", system_fingerprint="fp")
    body = {"model": MODEL, "prompt": "Hi", "max_tokens": 3, "seed": 2, "logprobs": 1}
    events = list(ENGINE.stream(build_request(body, wire=wire)))
    kwargs = {"wire": wire, "include_usage": True, "logprobs": True, "suffix": None}
    expected = b"".join(f.data for f in sse.frames(stream_chunks(events, identity, **kwargs)))
    assert b"".join(stream_frames(events, identity, **kwargs)) == expected


def test_streams_served_fast_equal_streams_served_through_chunks(make_server: Any) -> None:
    live = make_server()
    body = {"model": MODEL, "prompt": "Hi", "max_tokens": 6, "seed": 5, "stream": True,
            "stream_options": {"include_usage": True}, "logprobs": 1}
    fast = live.post(OPENAI, body)
    # A fault that touches nothing of this request's answer forces the chunk path.
    slow = live.post(OPENAI, body, headers={"X-Mock-Fault": "object-wrong"})
    fast_chunks = fast.chunks()
    slow_chunks = [c if c == "[DONE]" else {**c, "object": "text_completion"}
                   for c in slow.chunks()]
    strip = lambda cs: [c if c == "[DONE]" else {**c, "id": 0, "created": 0} for c in cs]  # noqa: E731
    assert strip(fast_chunks) == strip(slow_chunks)


class SendCounter:
    """A mock whose connections note every send to the socket (each ``transport.write``)."""

    def __init__(self, config: MockConfig) -> None:
        self.sends: list[bytes] = []
        app = create_app(config, engine=ENGINE)
        app.middlewares.append(self._count)
        self.live = LiveServer(config, app=app)

    @web.middleware
    async def _count(self, request: web.Request, handler: Any) -> web.StreamResponse:
        transport = request.transport
        assert transport is not None
        write, writelines = transport.write, transport.writelines

        def one(data: Any) -> None:
            self.sends.append(bytes(data))
            write(data)

        def many(pieces: Any) -> None:
            pieces = [bytes(piece) for piece in pieces]
            self.sends.append(b"".join(pieces))
            writelines(pieces)

        transport.write, transport.writelines = one, many  # type: ignore[method-assign]
        return await handler(request)


@pytest.fixture
def counted() -> Iterator[Any]:
    def start(**kwargs: Any) -> SendCounter:
        counter = SendCounter(MockConfig(**kwargs))
        started.append(counter.live.__enter__())
        return counter

    started: list[LiveServer] = []
    yield start
    for live in started:
        live.__exit__(None, None, None)


STREAM = {"model": MODEL, "prompt": "The Python language", "max_tokens": 8, "seed": 3,
          "stream": True, "logprobs": 1, "stream_options": {"include_usage": True}}


def test_plain_streams_send_headers_with_the_first_events_and_the_end_with_the_last(
    counted: Any,
) -> None:
    counter = counted()
    reply = counter.live.post(OPENAI, STREAM)
    chunks = reply.chunks()
    # The bytes are those of the chunks rendered for this identity, event for event.
    identity = Identity(chunks[0]["id"], chunks[0]["created"], MODEL,
                        system_fingerprint=ENGINE.fingerprint)
    events = list(ENGINE.stream(build_request(STREAM, wire="openai")))
    assert reply.data == b"".join(stream_frames(
        events, identity, wire="openai", include_usage=True, logprobs=True, suffix=None))
    # One send per YIELD_EVERY events, the headers riding with the first; the last send is
    # the events after the last full batch, if any, and the end of the chunked body.
    assert len(counter.sends) == len(chunks) // YIELD_EVERY + 1
    assert counter.sends[0].startswith(b"HTTP/1.1 200") and b"data: {" in counter.sends[0]
    assert len(chunks) % YIELD_EVERY  # (so that the last send holds events)
    assert counter.sends[-1].endswith(b"data: [DONE]\n\n\r\n0\r\n\r\n")


def test_plain_streams_shorter_than_a_batch_are_one_send(counted: Any) -> None:
    counter = counted()
    body = {"model": MODEL, "prompt": "Hi", "max_tokens": 1, "seed": 3, "stream": True}
    reply = counter.live.post(OPENAI, body)
    assert len(reply.chunks()) < YIELD_EVERY
    assert len(counter.sends) == 1
    head, _, rest = counter.sends[0].partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") and rest.endswith(b"\r\n0\r\n\r\n")


def test_streams_drawn_off_the_loop_send_each_batch_in_one_write(
    counted: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(streaming, "BATCH_SECONDS", 60.0)  # batches of BATCH_EVENTS events
    counter = counted()
    # over off_loop_thresholds.INLINE_TOKENS
    body = {**STREAM, "max_tokens": 300, "min_tokens": 300}
    reply = counter.live.post(OPENAI, body)
    chunks = reply.chunks()
    assert len(chunks) == 303  # 300 tokens, the finish, the usage, [DONE]
    identity = Identity(chunks[0]["id"], chunks[0]["created"], MODEL,
                        system_fingerprint=ENGINE.fingerprint)
    events = list(ENGINE.stream(build_request(body, wire="openai")))
    assert reply.data == b"".join(stream_frames(
        events, identity, wire="openai", include_usage=True, logprobs=True, suffix=None))
    # The headers at once (the first batch may take long), then one write per batch.
    batches = -(-len(chunks) // streaming.BATCH_EVENTS)
    assert len(counter.sends) == 1 + batches + 1
    assert b"data:" not in counter.sends[0] and counter.sends[-1] == b"0\r\n\r\n"


def test_streams_with_latency_send_their_headers_before_the_first_token(counted: Any) -> None:
    counter = counted(ttft_ms=30, itl_ms=1)
    reply = counter.live.post(OPENAI, STREAM)
    assert reply.chunks()[-1] == "[DONE]"
    assert counter.sends[0].startswith(b"HTTP/1.1 200") and b"data:" not in counter.sends[0]
    assert counter.sends[-1].endswith(b"data: [DONE]\n\n\r\n0\r\n\r\n")


@pytest.mark.parametrize("wire", ["openai", "friendli"])
@pytest.mark.parametrize("identity", [
    Identity.new(model=MODEL, system_fingerprint="fp_0123456789"),
    Identity("cmpl-\u00e9\"odd", 17, MODEL),
    Identity("x", 0, "m"),
])
def test_identity_prefix_starts_the_rendered_body(wire: str, identity: Identity) -> None:
    body = {"model": MODEL, "prompt": "Hi", "max_tokens": 2, "seed": 1}
    completion = ENGINE.complete(build_request(body, wire=wire))
    rendered = sse.encode_json(completion_body(completion, identity, wire=wire))
    assert rendered.startswith(identity_prefix(identity, wire=wire))


def test_fresh_ids_are_version_4_uuids() -> None:
    import uuid

    ids = {Identity.new(model=MODEL).id for _ in range(200)}
    assert len(ids) == 200
    for value in ids:
        assert value.startswith("cmpl-")
        parsed = uuid.UUID(hex=value[5:])
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
