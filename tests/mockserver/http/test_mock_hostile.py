"""The mock under hostile clients (issue 13): bounded bodies, deadlines, work off the loop.

Every test runs a real server on loopback and is bounded in time; none asserts how fast
anything is (``benchmarks/bench_hostile.py`` measures that). "The loop stayed free" is shown
by ``/health`` answering while a hostile request is still in flight.
"""

from __future__ import annotations

import gzip
import json
import platform
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from mock_live import ENGINE, MODEL, LiveServer

from mockserver import MockConfig, create_app, sse
from mockserver.http import generate
from mockserver.http.answer_bytes import complete_rendered, render_by_choice
from mockserver.http.cache import MAX_ENTRY_UNITS, ResultCache, completion_units
from mockserver.http.engine_threads import Offload, Stopped
from mockserver.http.state import CACHE, OFFLOAD
from mockserver.wire import Identity, completion_body
from procutil import heap
from reference_engine import Engine
from reference_engine.errors import ContextLengthError
from reference_engine.request import GenerationRequest
from reference_engine.results import Event
from reference_engine.sampling import SamplingParams

WAIT = 20.0
"""Upper bound of every wait below (never reached when things work)."""
MANY_PROMPTS = {"model": MODEL, "prompt": ["a"] * 100_000, "max_tokens": 16}


def _eventually(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {WAIT:g} s: {what}")
        time.sleep(0.02)


def _raw(port: int, head: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    sock.sendall(head)
    return sock


def _read_answer(sock: socket.socket) -> bytes:
    """One HTTP answer with a Content-Length body."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:")))
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def _read_until_closed(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def _post_head(length: int, *extra: str) -> bytes:
    lines = ["POST /v1/completions HTTP/1.1", "Host: x", "Content-Type: application/json",
             f"Content-Length: {length}", *extra]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _offload(live: LiveServer) -> Offload:
    offload: Offload = live.app[OFFLOAD]
    return offload


# -- bodies ---------------------------------------------------------------------------------


def test_a_gzip_bomb_gets_413_and_the_client_can_finish_sending(server: LiveServer) -> None:
    """The rest of the bomb is dropped unparsed (never inflated: the CPU this saves is measured
    by benchmarks/bench_hostile.py); the connection is not reset under a client still
    sending."""
    bomb = gzip.compress(b"\0" * (64 << 20), 9)
    with _raw(server.port, _post_head(len(bomb), "Content-Encoding: gzip")) as sock:
        sock.sendall(bomb)
        answer = _read_answer(sock)
    assert answer.startswith(b"HTTP/1.1 413 ")
    assert b'"code":"request_too_large"' in answer
    assert server.call("GET", "/health").status == 200


def test_a_body_too_large_by_its_length_gets_413_while_it_is_sent(server: LiveServer) -> None:
    with _raw(server.port, _post_head(2 << 20, "Content-Encoding: gzip")) as sock:
        sock.sendall(b"\x1f\x8b" + b"\0" * (2 << 20))
        answer = _read_answer(sock)
    assert answer.startswith(b"HTTP/1.1 413 ")


def test_a_prompt_over_max_prompt_chars_is_refused_naming_the_field(make_server: Any) -> None:
    live = make_server(max_prompt_chars=10)
    reply = live.post("/v1/completions", {"model": MODEL, "prompt": ["ok", "x" * 11]})
    assert reply.status == 400
    assert reply.error["param"] == "prompt" and reply.error["code"] == "prompt_too_long"
    assert "prompt[1]" in reply.error["message"]
    friendli = live.post("/dedicated/v1/completions", {"model": MODEL, "prompt": "x" * 11})
    assert friendli.status == 422 and friendli.error["code"] == "prompt_too_long"
    assert live.post("/v1/completions", {"model": MODEL, "prompt": "x" * 10,
                                         "max_tokens": 1}).status == 200


def test_the_default_prompt_limit_refuses_a_million_characters(server: LiveServer) -> None:
    reply = server.post("/v1/completions", {"model": MODEL, "prompt": "a " * 500_000})
    assert reply.status == 400 and reply.error["code"] == "prompt_too_long"


# -- deadlines ------------------------------------------------------------------------------


def test_a_body_that_does_not_arrive_gets_408_and_a_closed_connection(make_server: Any) -> None:
    live = make_server(read_timeout=0.3)
    sock = _raw(live.port, _post_head(100) + b'{"model"')
    answer = _read_until_closed(sock)
    sock.close()
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert b'"code":"request_timeout"' in answer


def test_a_connection_without_a_complete_request_is_closed_when_idle(make_server: Any) -> None:
    live = make_server(idle_timeout=0.3)
    sock = _raw(live.port, b"GET /health HTTP/1.1\r\nHost: x\r\n")  # headers never finished
    assert _read_until_closed(sock) == b""
    sock.close()
    assert live.call("GET", "/health").status == 200


def test_the_default_deadlines_leave_a_slow_but_normal_request_alone(server: LiveServer) -> None:
    body = json.dumps({"model": MODEL, "prompt": "Hi", "max_tokens": 1}).encode()
    sock = _raw(server.port, _post_head(len(body)))
    for byte in range(0, len(body), 8):  # dribbled in small pieces
        sock.sendall(body[byte:byte + 8])
        time.sleep(0.02)
    answer = sock.recv(65536)
    sock.close()
    assert answer.startswith(b"HTTP/1.1 200 ")


# -- work off the loop ------------------------------------------------------------------------


def test_health_answers_while_a_hostile_request_is_in_flight(server: LiveServer) -> None:
    """100,000 prompts run on a worker thread: /health answers meanwhile; when the client goes
    away, the work stops (the thread, not only the wait)."""
    body = json.dumps(MANY_PROMPTS).encode()
    sock = _raw(server.port, _post_head(len(body)))
    sock.sendall(body)
    offload = _offload(server)
    _eventually(lambda: offload.running > 0, "the request's work started on a thread")
    assert server.call("GET", "/health", timeout=WAIT).status == 200
    sock.setblocking(False)
    with pytest.raises(BlockingIOError):  # no answer yet: still in flight after /health's
        sock.recv(1)
    sock.close()
    _eventually(lambda: offload.running == 0, "the abandoned request's work stopped")


def test_a_request_over_its_budget_gets_503_and_its_work_stops(make_server: Any) -> None:
    live = make_server(request_budget=0.2)
    reply = live.post("/v1/completions", MANY_PROMPTS, timeout=WAIT)
    assert reply.status == 503
    assert reply.error["code"] == "request_budget_exceeded" and "retry-after" in reply.headers
    _eventually(lambda: _offload(live).running == 0, "the work over budget stopped")


def test_a_large_stream_is_generated_off_the_loop_and_matches_the_whole_answer(
    server: LiveServer,
) -> None:
    body = {"model": MODEL, "prompt": ["The Python language"] * 20, "max_tokens": 4,
            "seed": 3, "echo": True, "logprobs": 1}
    whole = server.post("/v1/completions", body).json()
    streamed = server.post("/v1/completions", {**body, "stream": True})
    texts = [""] * len(whole["choices"])
    for chunk in streamed.chunks()[:-1]:
        for choice in chunk["choices"]:
            texts[choice["index"]] += choice["text"]
    assert texts == [choice["text"] for choice in whole["choices"]]
    assert streamed.events()[-1] == "[DONE]"


def _request(**fields: Any) -> GenerationRequest:
    base: dict[str, Any] = {"prompts": ("Hello there", "The Python language", (464, 318)),
                            "max_tokens": 5, "sampling": SamplingParams(temperature=1.0)}
    return GenerationRequest(**{**base, **fields})


@pytest.mark.parametrize("fields", [
    {"seed": 7, "n": 2},
    {"seed": 7, "n": 2, "best_of": 3},
    {"seed": (5, 9), "n": 2, "echo": True, "logprobs": 2},
    {"sampling": SamplingParams(temperature=0.0), "max_tokens": 0, "echo": True, "logprobs": 1,
     "seed": 1},
])
def test_prompt_by_prompt_completion_equals_the_single_call(fields: dict[str, Any]) -> None:
    generation = _request(**fields)
    assert generate.complete(ENGINE, generation, threading.Event()) == ENGINE.complete(generation)


def test_prompt_by_prompt_errors_name_the_prompt_the_single_call_names() -> None:
    generation = _request(prompts=("Hi", "Hi " * 1500), max_tokens=1000)
    with pytest.raises(ContextLengthError) as single:
        ENGINE.complete(generation)
    with pytest.raises(ContextLengthError) as sliced:
        generate.complete(ENGINE, generation, threading.Event())
    assert str(sliced.value) == str(single.value) and "prompt 1 " in str(single.value)
    assert sliced.value.param == single.value.param


def test_unseeded_prompts_share_their_seeds_as_in_the_single_call() -> None:
    generation = _request(prompts=("Hello",) * 3, n=2)
    choices = generate.complete(ENGINE, generation, threading.Event()).choices
    assert [c.seed for c in choices[:2]] == [c.seed for c in choices[2:4]]
    assert [c.text for c in choices[:2]] == [c.text for c in choices[4:6]]


def test_unseeded_prompts_with_best_of_get_their_answer() -> None:
    """best_of > n without a seed: the shared seeds must fit the engine's seed rules."""
    generation = _request(prompts=("Hello",) * 3, n=2, best_of=3)
    completion = generate.complete(ENGINE, generation, threading.Event())
    assert [c.index for c in completion.choices] == list(range(6))
    assert [c.text for c in completion.choices[:2]] == [c.text for c in completion.choices[2:4]]


@pytest.mark.parametrize("choices", [0, 1, 3])
def test_encoding_by_choice_gives_the_same_bytes(choices: int) -> None:
    body = {"id": "cmpl-1", "object": "text_completion", "created": 1, "model": MODEL,
            "choices": [{"index": i, "text": f'say "choices":[] {i}\n', "logprobs": None}
                        for i in range(choices)], "usage": {"total_tokens": 3}}
    assert sse.encode_json_by_choice(body) == sse.encode_json(body)


def test_a_large_answer_written_in_pieces_is_the_whole_body(server: LiveServer) -> None:
    body = {"model": MODEL, "prompt": [" ".join(["word"] * 300)] * 40, "echo": True,
            "logprobs": 5, "max_tokens": 0, "temperature": 0}
    reply = server.post("/v1/completions", body, timeout=WAIT * 3)
    assert reply.status == 200 and reply.complete
    assert int(reply.headers["content-length"]) == len(reply.data) > 1 << 20
    assert "transfer-encoding" not in reply.headers
    assert len(reply.json()["choices"]) == 40


@pytest.mark.parametrize("stream", [False, True])
def test_a_large_body_is_answered_as_a_small_one_is(server: LiveServer, stream: bool) -> None:
    """Over 64 KiB the body is parsed, validated and converted on a thread: same answer."""
    padding = "x" * (70 * 1024)
    body = {"model": MODEL, "prompt": ["Hello there", padding[:10]], "max_tokens": 3,
            "seed": 5, "stream": stream}
    small = server.post("/v1/completions", body)
    large = server.post("/v1/completions", {**body, "stream_options": {"pad": padding}}
                        if stream else {**body, "user": padding})
    assert small.status == large.status == 200
    if stream:
        def texts(reply: Any) -> list[Any]:
            return [c["choices"] for c in reply.chunks()[:-1]]
        assert texts(small) == texts(large)
    else:
        assert small.json()["choices"] == large.json()["choices"]
    bad = server.post("/v1/completions", {**body, "user": padding, "max_tokens": 5000})
    assert bad.status == 400 and bad.error["param"] == "max_tokens"


@pytest.mark.parametrize("wire", ["openai", "friendli"])
@pytest.mark.parametrize("suffix", [None, " END"])
def test_rendering_by_choice_gives_the_same_bytes(wire: str, suffix: str | None) -> None:
    completion = ENGINE.complete(_request(seed=3, n=2, echo=True, logprobs=2))
    identity = Identity.new(model=MODEL, system_fingerprint="fp" if wire == "openai" else None)
    whole = sse.encode_json(completion_body(completion, identity, wire=wire, suffix=suffix))
    assert render_by_choice(completion, identity, wire=wire, suffix=suffix) == whole


@pytest.mark.parametrize("wire", ["openai", "friendli"])
@pytest.mark.parametrize("fields", [
    {"seed": 3, "n": 2, "echo": True, "logprobs": 2},
    {"seed": 11, "n": 2, "best_of": 3},
    {"sampling": SamplingParams(temperature=0.0), "max_tokens": 0, "echo": True, "logprobs": 1,
     "seed": 1},
])
def test_rendering_prompt_by_prompt_gives_the_same_bytes(wire: str,
                                                         fields: dict[str, Any]) -> None:
    generation = _request(**fields)
    identity = Identity.new(model=MODEL, system_fingerprint="fp" if wire == "openai" else None)
    completion = ENGINE.complete(generation)
    whole = sse.encode_json(completion_body(completion, identity, wire=wire, suffix=" E"))
    encoded, usage, kept = complete_rendered(ENGINE, generation, threading.Event(), identity,
                                             wire=wire, suffix=" E", keep_units=1 << 30)
    assert encoded == whole and usage == completion.usage and kept == completion
    _, _, refused = complete_rendered(ENGINE, generation, threading.Event(), identity,
                                      wire=wire, suffix=" E", keep_units=10)
    assert refused is None  # larger than the cache keeps: never assembled


def test_rendering_prompt_by_prompt_stops_when_told() -> None:
    stop = threading.Event()
    stop.set()
    with pytest.raises(Stopped):
        complete_rendered(ENGINE, _request(seed=1), stop, Identity.new(model=MODEL),
                          wire="openai", suffix=None)


def test_the_result_cache_refuses_results_over_its_byte_bound() -> None:
    cache = ResultCache(entries=16)
    small = ENGINE.complete(_request(seed=1, prompts=("Hi",), max_tokens=2))
    huge = ENGINE.complete(_request(seed=1, prompts=(" ".join(["word"] * 1000),) * 8,
                                    max_tokens=0, echo=True, logprobs=5))
    assert completion_units(small) <= MAX_ENTRY_UNITS < completion_units(huge)
    cache.keep_completion(("openai", "small"), small)
    cache.keep_completion(("openai", "huge"), huge)
    assert cache.completion(("openai", "small")) == small
    assert cache.completion(("openai", "huge")) is None
    huge_stream = ENGINE.stream(_request(seed=1, prompts=(" ".join(["word"] * 1000),) * 8,
                                         max_tokens=0, echo=True, logprobs=5))
    list(cache.recording(("openai", "stream"), huge_stream))
    assert cache.events(("openai", "stream")) is None
    list(cache.recording(("openai", "small-stream"), ENGINE.stream(_request(seed=1))))
    assert cache.events(("openai", "small-stream")) is not None


def test_a_large_deterministic_answer_is_not_kept_but_a_large_request_with_a_small_one_is(
    server: LiveServer,
) -> None:
    """Both go prompt by prompt on a thread; only the small result enters the cache."""
    cache = server.app[CACHE]
    echo = {"model": MODEL, "prompt": [" ".join(["word"] * 300)] * 40, "echo": True,
            "logprobs": 5, "max_tokens": 0, "temperature": 0}
    short = {"model": MODEL, "prompt": ["Hello"] * 40, "max_tokens": 2, "temperature": 0}
    hits = cache.hits
    for body in (echo, short):  # again with the keys reversed: other bytes, same request
        again = dict(reversed(list(body.items())))
        for sent in (body, again):
            assert server.post("/v1/completions", sent, timeout=WAIT * 3).status == 200
    assert cache.hits - hits == 1  # the short one's repeat; the echo answer was too large to keep


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="a glibc setting")
def test_the_serving_process_fixes_glibcs_mmap_threshold() -> None:
    """So large answers' buffers go back to the OS when freed (``procutil/heap.py``)."""
    assert heap.fix_mmap_threshold()
    heap.trim()


class _ThreadSpy(Engine):
    """The engine, noting which thread draws each stream event."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: set[str] = set()

    def stream(self, request: GenerationRequest) -> Iterator[Event]:  # type: ignore[override]
        events = super().stream(request)

        def spied() -> Iterator[Event]:
            for event in events:
                self.threads.add(threading.current_thread().name)
                yield event

        return spied()


def test_a_large_stream_with_faults_and_latency_is_drawn_off_the_loop() -> None:
    """Latency and chunk faults bent the stream on the loop before: each event of a large
    request (echo scoring) was drawn there. Same texts as unbent, every event on a thread."""
    spy = _ThreadSpy()
    body = {"model": MODEL, "prompt": ["The Python language"] * 20, "max_tokens": 3,
            "seed": 3, "echo": True, "logprobs": 1, "stream": True}
    with LiveServer(app=create_app(MockConfig(itl_ms=1.0), engine=spy)) as live:
        plain = live.post("/v1/completions", {**body, "stream": False}).json()
        spy.threads.clear()
        bent = live.post("/v1/completions", body, headers={"X-Mock-Fault": "created-changes"},
                         timeout=WAIT)
    texts = [""] * len(plain["choices"])
    for chunk in bent.chunks()[:-1]:
        for choice in chunk["choices"]:
            texts[choice["index"]] += choice["text"]
    assert texts == [choice["text"] for choice in plain["choices"]]
    assert bent.events()[-1] == "[DONE]"
    assert spy.threads and all(name.startswith("mock-engine") for name in spy.threads)
