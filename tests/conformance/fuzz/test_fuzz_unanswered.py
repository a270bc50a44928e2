"""A fuzzed request that got no answer fails the rule that judges that request, not ERRORS-008.

Found fuzzing the lab's Prism 5.16: it never answers a body that is not JSON, and a non-ASCII
unknown field name makes it exit before answering. The fuzz report filed the first under
ERRORS-008 ("valid requests get 2xx") and the second under SSE-008 ("the connection is not
dropped mid-stream"), although neither request was valid and no stream had begun; ``conformance
run`` files the same behaviour under ERRORS-001. These tests send real requests on loopback to
a server that, like Prism, answers nothing to what it cannot parse.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
import requests
import schemathesis
from fuzz_support import MODEL, findings, found_rules, run_cli
from threaded_server import serving

import spec
from conformance.fuzz.findings import network_finding
from conformance.fuzz.guard import RequestGuard
from conformance.fuzz.transport import guard_schema
from conformance.fuzz.unanswered import unanswered_rule

VALID = {"model": MODEL, "prompt": "Hi", "max_tokens": 1}
ERROR = json.dumps({"error": {"message": "invalid", "type": "invalid_request_error",
                              "param": None, "code": None}}).encode()


class Silent(BaseHTTPRequestHandler):
    """Closes the connection without a word on a body it cannot parse as JSON (a POST to
    ``/models`` has none), or on a body naming ``hang`` (a request it "crashes" on); answers
    the error envelope otherwise."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if body is None or (isinstance(body, dict) and "hang" in body):
            self.close_connection = True
            return
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(ERROR)))
        self.end_headers()
        self.wfile.write(ERROR)

    def do_GET(self) -> None:
        body = json.dumps({"object": "list", "data": [
            {"id": MODEL, "object": "model", "created": 1, "owned_by": "me"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    with serving(Silent) as url:
        yield url


def _unanswered(server: str, body: object) -> str:
    """The rule the fuzzer files ``body`` under (openai profile) when it gets no answer."""
    guard = RequestGuard()
    schema = guard_schema(schemathesis.openapi.from_dict(spec.profile_document("openai")), guard)
    case = schema["/v1/completions"]["POST"].Case(body=body, media_type="application/json")
    with pytest.raises(requests.RequestException):
        case.call(base_url=server)
    [failure] = guard.network_failures
    assert failure.connected
    rule = unanswered_rule(failure.request, streamed=failure.streamed, completions=True,
                           profile=spec.get_profile("openai"))
    assert network_finding(failure, (), rule_of=lambda _: rule).rule_id == rule
    return rule


def test_an_invalid_stream_left_unanswered_is_invalid_input_not_a_dropped_stream(
        server: str) -> None:
    # Prism's crash: no model, no prompt, an unknown field, stream true
    assert _unanswered(server, {"hang": [], "max_tokens": 16, "stream": True}) == "ERRORS-001"


def test_a_valid_request_left_unanswered_stays_errors_008_or_sse_008(server: str) -> None:
    assert _unanswered(server, {**VALID, "hang": 1}) == "ERRORS-009"  # openai rejects it
    profile = spec.get_profile("openai-compatible")
    guard = RequestGuard()
    document = spec.profile_document("openai-compatible")
    schema = guard_schema(schemathesis.openapi.from_dict(document), guard)
    for body in ({**VALID, "hang": 1}, {**VALID, "hang": 1, "stream": True}):
        case = schema["/v1/completions"]["POST"].Case(body=body, media_type="application/json")
        with pytest.raises(requests.RequestException):
            case.call(base_url=server)
    plain, streamed = guard.network_failures
    assert unanswered_rule(plain.request, streamed=plain.streamed, completions=True,
                           profile=profile) == "ERRORS-008"  # the unknown field is ignorable
    assert unanswered_rule(streamed.request, streamed=streamed.streamed, completions=True,
                           profile=profile) == "SSE-008"
    # another operation's request is not judged by the completions contract
    assert unanswered_rule(plain.request, streamed=False, completions=False,
                           profile=profile) == "ERRORS-008"


def test_a_fuzz_run_files_an_unanswered_malformed_body_under_errors_001(
        server: str, tmp_path: Path) -> None:
    report_path = tmp_path / "report.json"
    status, out, err = run_cli([
        "fuzz", "--base-url", f"{server}/v1", "--model", MODEL, "--phases", "coverage",
        "--max-examples", "10", "--seed", "1", "--timeout", "5", "--max-requests", "400",
        "--no-shrink", "-q", "--json", str(report_path),
    ])
    assert status == 1, err
    report = json.loads(report_path.read_text())
    rules = found_rules(report)
    # neither the malformed bodies nor schemathesis' POST /models probe were valid requests
    assert "ERRORS-008" not in rules and "SSE-008" not in rules, out
    unanswered = [f for f in findings(report) if f["rule"] == "ERRORS-001"
                  and "did not arrive whole" in f["message"]]
    assert unanswered, out
    for finding in unanswered:
        body = finding["request"]["body"]
        try:
            sent = json.loads(body)
        except ValueError:
            continue  # malformed JSON: invalid by definition
        assert spec.get_profile("openai").validator("request").is_valid(sent) is False, body
