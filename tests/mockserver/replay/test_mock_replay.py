"""``mockserver --replay``: recorded exchanges served back exactly, over real HTTP.

The recordings here are written by hand in the report's format (the harness writes the same
shape; ``tests/conformance/reporting/test_reporting_replay.py`` round-trips real runs through it).
"""

from __future__ import annotations

import base64
import http.client
import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mock_live import LiveServer

from mockserver.replay import (
    Matcher,
    RecordingError,
    canonical_body,
    create_replay_app,
    parse_recording,
)

COMPLETIONS = "http://127.0.0.1:1/v1/completions"


def exchange(
    body: Any,
    *,
    status: int | None = 200,
    headers: list[list[str]] | None = None,
    response: bytes = b'{"ok": true}',
    chunks: list[list[float]] | None = None,
    termination: str = "eof",
    started: float = 0.0,
    method: str = "POST",
    url: str = COMPLETIONS,
    content_type: str = "application/json",
) -> dict[str, Any]:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    try:
        response_field: dict[str, str] = {"body": response.decode("utf-8")}
    except UnicodeDecodeError:
        response_field = {"body_base64": base64.b64encode(response).decode()}
    return {
        "request": {"method": method, "url": url,
                    "headers": [["Content-Type", content_type]], "body": raw.decode()},
        "status": status,
        "reason": "OK" if status == 200 else None,
        "headers": headers if headers is not None else [["Content-Type", "application/json"]],
        "termination": termination,
        "timings": {"started_wall": started, "headers_at": 0.0, "first_byte_at": 0.0,
                    "ended_at": 0.01},
        "chunks": chunks if chunks is not None else [[len(response), 0.0]],
        **response_field,
    }


def replay_server(exchanges: dict[str, dict[str, Any]], timing: str = "none") -> LiveServer:
    return LiveServer(app=create_replay_app(parse_recording({"exchanges": exchanges}),
                                            timing=timing))


def test_the_recorded_status_headers_and_bytes_come_back_exactly() -> None:
    weird = b"\xff\xfe not UTF-8 \x00"
    recorded = exchange(
        {"prompt": "a"}, status=418, response=weird,
        headers=[["Content-Type", "text/x-odd"], ["X-Repeat", "1"], ["X-Repeat", "2"],
                 ["Content-Length", str(len(weird))]],
    )
    with replay_server({"p/one": recorded}) as server:
        reply = server.post("/v1/completions", {"prompt": "a"})
        raw = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        raw.request("POST", "/v1/completions", body=b'{"prompt":"a"}',
                    headers={"Content-Type": "application/json"})
        response = raw.getresponse()
        repeats = response.msg.get_all("X-Repeat")
        response.read()
        raw.close()
    assert reply.status == 418
    assert reply.data == weird
    assert reply.headers["content-type"] == "text/x-odd"
    assert reply.headers["content-length"] == str(len(weird))
    assert repeats == ["1", "2"]


def test_a_json_body_matches_whatever_its_key_order_and_spacing() -> None:
    recorded = exchange({"model": "m", "prompt": "a", "max_tokens": 3}, response=b"yes")
    with replay_server({"p/one": recorded}) as server:
        reply = server.post("/v1/completions",
                            raw=b'{ "max_tokens": 3,\n "prompt": "a", "model": "m" }',
                            headers={"Content-Type": "application/json; charset=utf-8"})
    assert (reply.status, reply.data) == (200, b"yes")


def test_identical_requests_are_answered_in_recorded_order_then_again_from_the_start() -> None:
    body = {"prompt": "same"}
    recorded = {
        "p/second": exchange(body, response=b"two", started=2.0),
        "p/first": exchange(body, response=b"one", started=1.0),
    }
    with replay_server(recorded) as server:
        answers = [server.post("/v1/completions", body).data for _ in range(3)]
    assert answers == [b"one", b"two", b"one"]


def test_an_unmatched_request_gets_404_naming_the_closest_recording_and_the_field() -> None:
    recorded = {
        "greedy/ns": exchange({"model": "m", "prompt": "a", "max_tokens": 16}),
        "models/list": exchange(b"", method="GET", url="http://127.0.0.1:1/v1/models"),
    }
    with replay_server(recorded) as server:
        reply = server.post("/v1/completions", {"model": "m", "prompt": "a", "max_tokens": 17})
        wrong_path = server.call("GET", "/v1/nothing")
    assert reply.status == 404
    error = reply.error
    assert set(error) == {"message", "type", "param", "code"}
    assert error["code"] == "no_recorded_exchange"
    assert error["param"] == "max_tokens"
    assert "'greedy/ns'" in error["message"]
    assert "recorded 16, this request 17" in error["message"]
    assert wrong_path.status == 404
    assert "'models/list'" in wrong_path.error["message"]
    assert "path" in wrong_path.error["message"]


def test_a_stream_is_written_in_its_recorded_pieces_at_their_recorded_times() -> None:
    stream = b'data: {"a": 1}\n\ndata: [DONE]\n\n'
    recorded = exchange(
        {"stream": True}, response=stream, chunks=[[16, 0.0], [14, 0.3]],
        headers=[["Content-Type", "text/event-stream"], ["Transfer-Encoding", "chunked"]],
    )
    with replay_server({"p/s": recorded}, timing="recorded") as server:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        connection.request("POST", "/v1/completions", body=b'{"stream": true}',
                           headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        first = response.read1()
        started = time.perf_counter()
        rest = response.read()
        waited = time.perf_counter() - started
        connection.close()
    assert response.getheader("Transfer-Encoding") == "chunked"
    assert first == stream[:16]
    assert rest == stream[16:]
    assert waited > 0.15  # the second piece came later, as it did in the recording


def test_a_connection_the_recorded_server_broke_is_broken_at_the_same_point() -> None:
    recorded = exchange(
        {"stream": True}, response=b"data: {}\n\n", termination="connection-error",
        headers=[["Content-Type", "text/event-stream"], ["Transfer-Encoding", "chunked"]],
    )
    with replay_server({"p/s": recorded}) as server:
        reply = server.post("/v1/completions", {"stream": True})
    assert reply.status == 200
    assert not reply.complete
    assert reply.data == b"data: {}\n\n"


def test_a_server_that_never_answered_never_answers_until_the_client_gives_up() -> None:
    recorded = exchange(b"{not json", status=None, termination="total-time-limit",
                        headers=[], response=b"", chunks=[])
    with replay_server({"invalid/malformed": recorded}) as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
            sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n"
                         b"Content-Type: application/json\r\nContent-Length: 9\r\n\r\n{not json")
            sock.settimeout(0.5)
            with pytest.raises(TimeoutError):
                sock.recv(100)
        # the server is still serving others (its own /health: 200)
        assert server.call("GET", "/health").status == 200


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({}, "no \"exchanges\" object"),
        ({"exchanges": {}}, "records no exchange"),
        ({"exchanges": {"p/k": {"status": 200}}}, "has no dict 'request'"),
        ({"exchanges": {"p/k": {**exchange({}), "status": "200"}}}, "is not an HTTP status"),
        ({"exchanges": {"p/k": {**exchange({}), "headers": [["a"]]}}}, "[name, value] pairs"),
        ({"exchanges": {"p/k": {**exchange({}), "body_base64": "%%"}}}, "not base64"),
    ],
)
def test_a_file_that_is_not_a_recording_is_refused_with_the_reason(
    document: Any, message: str
) -> None:
    with pytest.raises(RecordingError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_recording(document)


def test_the_command_line_refuses_a_file_that_is_not_a_recording(tmp_path: Path) -> None:
    bad = tmp_path / "report.json"
    bad.write_text('{"results": []}')
    done = subprocess.run(
        [sys.executable, "-m", "mockserver", "--replay", str(bad), "--port", "0"],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 2
    assert "conformance run --json" in done.stderr


def test_health_answers_200_in_replay_mode_and_other_methods_still_replay() -> None:
    with replay_server({"p/one": exchange({"prompt": "a"})}) as server:
        health = server.call("GET", "/health")
        posted = server.call("POST", "/health", {})
    assert health.status == 200
    assert health.json() == {"status": "ok", "mode": "replay", "exchanges": 1}
    assert (posted.status, posted.error["code"]) == (404, "no_recorded_exchange")


def test_a_readiness_probe_of_the_replay_command_gets_200(tmp_path: Path) -> None:
    """``mockserver --replay``: once the ready line is out, ``GET /health`` answers 200, as a
    readiness probe (a CI service, a Kubernetes pod) expects of either mode."""
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"exchanges": {"p/one": exchange({"prompt": "a"})}}))
    process = subprocess.Popen(
        [sys.executable, "-m", "mockserver", "--replay", str(report), "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert process.stdout is not None
        ready = process.stdout.readline()
        assert ready.startswith("mockserver: serving http://127.0.0.1:"), ready
        port = int(ready.split(":")[3].split("/")[0])
        probe = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        probe.request("GET", "/health")
        answer = probe.getresponse()
        assert answer.status == 200
        assert json.loads(answer.read())["status"] == "ok"
        probe.close()
    finally:
        process.terminate()
        process.communicate(timeout=20)


def test_canonical_bodies_compare_json_as_json_and_other_bodies_as_bytes() -> None:
    assert canonical_body("application/json", b'{"b":1,"a":2}') == canonical_body(
        None, b'{ "a": 2, "b": 1 }')
    assert canonical_body("text/plain", b'{"a":2}') != canonical_body("text/plain", b'{"a": 2}')
    assert canonical_body("application/json", b"{bad") == "bytes:" + b"{bad".hex()


def test_among_equal_json_bodies_the_one_with_the_same_bytes_is_preferred() -> None:
    spaced, tight = b'{"a": 1}', b'{"a":1}'
    matcher = Matcher(parse_recording({"exchanges": {
        "p/spaced": exchange(spaced, started=1.0),
        "p/tight": exchange(tight, started=2.0),
    }}))
    taken = matcher.take("POST", "/v1/completions", "application/json", tight)
    assert taken is not None and taken.label == "p/tight"


@pytest.mark.parametrize("cut", [
    {"body_cut": {"head_bytes": 2, "tail_bytes": 1, "omitted_bytes": 9,
                  "why": "the report keeps the head and tail of a long body"}},
    {"body_truncated": True, "bytes_received": 12},
])
def test_a_cut_recording_is_said_to_be_cut_never_served_shorter(cut: dict[str, Any]) -> None:
    recorded = {**exchange({"prompt": "a"}, response=b"abc"), **cut}
    with replay_server({"p/cut": recorded}) as server:
        reply = server.post("/v1/completions", {"prompt": "a"})
    assert reply.status == 502
    assert reply.headers["x-mock-replay"] == "cut"
    assert reply.error["code"] == "recording_cut"
    assert "'p/cut' cannot be replayed byte for byte" in reply.error["message"]
