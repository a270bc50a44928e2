"""A cut stream or a body too deep to parse is judged, never passed and never an ERROR.

Each raw loopback server lists the model (``GET /v1/models``) and answers every completion the
same hostile way; the whole OpenAI catalog runs against it in this process:

* an endless stream of small valid chunks, so the harness cuts every stream at its event limit
  and never sees ``[DONE]``: SSE-009 FAILs, the rules that need a stream's end SKIP naming it,
  and only rules about each byte, event, header or status PASS;
* JSON nested 100,000 deep, as the body and as a stream event: SCHEMA-001 and SSE-004 FAIL
  naming the depth, the rules built on those bodies SKIP;
* an endless JSON body, cut at the total-bytes limit: no rule judges a non-streamed body's size,
  so the rules that read it SKIP naming the limit; a streamed request's is SSE-009's FAIL.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable

import pytest
from harness_support import settings_for
from raw_server import read_request, serve_raw

from conformance.model import RunResult
from conformance.rules import CATALOG
from conformance.run.runner import execute
from conformance.run.settings import default_limits
from conformance.transport import Limits
from conformance.wire_json import MAX_JSON_DEPTH

CHUNK = (
    b'data: {"id":"c","object":"text_completion","created":1,"model":"m",'
    b'"choices":[{"index":0,"text":"x","logprobs":null,"finish_reason":null}]}\n\n'
)
MODELS = (b'{"object":"list","data":[{"id":"reference-ngram","object":"model","created":1,'
          b'"owned_by":"x"}]}')
DEEP = b"[" * 100_000 + b"]" * 100_000
LIMITS = dataclasses.replace(default_limits(3.0), idle_timeout=1.0, max_events=500)
"""Short times and a small event limit, so that every endless stream is cut quickly."""
Answer = Callable[[bytes, asyncio.StreamWriter], Awaitable[None]]

NEEDS_THE_END = (
    "SSE-002", "SSE-005", "SSE-006", "SSE-007", "SSE-008",
    "FINISH-001", "FINISH-002", "FINISH-004", "IDENTITY-001", "IDENTITY-002", "IDENTITY-003",
    "INDICES-002", "USAGE-003", "USAGE-004", "USAGE-005", "USAGE-011",
)
"""Rules whose requirement needs a stream's end: [DONE], the last event, the finish or usage
chunk, the whole stream."""
SEEN_IS_ENOUGH = frozenset({
    "SSE-001", "SSE-003", "SSE-004", "SCHEMA-001", "CONTENT-TYPE-001", "CONTENT-TYPE-003",
    "MODELS-001", "MODELS-002", "PARAMS-006",
    "ERRORS-002", "ERRORS-003", "ERRORS-005", "ERRORS-006", "ERRORS-008", "ERRORS-011",
})
"""Rules that may PASS against an endless stream: each judges bytes, events, headers or
statuses one at a time, all of them seen whole (ERRORS-011 reads a body only under a 5xx)."""


def head(content_type: bytes, length: int | None = None) -> bytes:
    sized = b"Content-Length: %d\r\nConnection: close\r\n" % length if length is not None else b""
    return b"HTTP/1.1 200 OK\r\nContent-Type: " + content_type + b"\r\n" + sized + b"\r\n"


async def endless(body: bytes, writer: asyncio.StreamWriter) -> None:
    writer.write(head(b"text/event-stream"))
    while True:
        writer.write(CHUNK * 64)
        await writer.drain()


async def deep(body: bytes, writer: asyncio.StreamWriter) -> None:
    if b'"stream": true' in body or b'"stream":true' in body:
        events = b"data: " + DEEP + b"\n\ndata: [DONE]\n\n"
        writer.write(head(b"text/event-stream", len(events)) + events)
    else:
        writer.write(head(b"application/json", len(DEEP)) + DEEP)
    await writer.drain()


async def endless_json(body: bytes, writer: asyncio.StreamWriter) -> None:
    writer.write(head(b"application/json") + b'{"id": "')
    while True:
        writer.write(b"x" * 65536)
        await writer.drain()


async def against(answer: Answer, limits: Limits = LIMITS) -> RunResult:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request, body = await read_request(reader)
        if request.startswith(b"GET "):
            writer.write(head(b"application/json", len(MODELS)) + MODELS)
            await writer.drain()
        else:
            await answer(body, writer)

    async with serve_raw(handle) as base:
        settings = settings_for(f"{base}/v1", "openai", limits=limits)
        return await execute(settings, CATALOG.select(profile=settings.profile))


@pytest.fixture(scope="module")
def endless_run() -> dict[str, tuple[str, str]]:
    result = asyncio.run(against(endless))
    return {r.rule.id: (r.verdict.value, r.message or "") for r in result.results}


@pytest.fixture(scope="module")
def deep_run() -> dict[str, tuple[str, str]]:
    result = asyncio.run(against(deep))
    return {r.rule.id: (r.verdict.value, r.message or "") for r in result.results}


@pytest.fixture(scope="module")
def endless_json_run() -> dict[str, tuple[str, str]]:
    limits = dataclasses.replace(LIMITS, max_total_bytes=1 << 20)
    result = asyncio.run(against(endless_json, limits))
    return {r.rule.id: (r.verdict.value, r.message or "") for r in result.results}


def test_an_endless_stream_fails_sse_009_and_errors_nothing(
    endless_run: dict[str, tuple[str, str]],
) -> None:
    assert endless_run["SSE-009"][0] == "FAIL", endless_run["SSE-009"]
    errors = {rule: found for rule, found in endless_run.items() if found[0] == "ERROR"}
    assert not errors


@pytest.mark.parametrize("rule_id", NEEDS_THE_END)
def test_a_rule_that_needs_the_end_skips_a_cut_stream(
    endless_run: dict[str, tuple[str, str]], rule_id: str
) -> None:
    verdict, message = endless_run[rule_id]
    assert verdict == "SKIP", (rule_id, verdict, message)
    assert "SSE-009" in message or "--max-run-memory" in message, message


def test_only_rules_about_what_was_seen_pass_an_endless_stream(
    endless_run: dict[str, tuple[str, str]],
) -> None:
    passed = {rule for rule, (verdict, _) in endless_run.items() if verdict == "PASS"}
    assert passed <= SEEN_IS_ENOUGH, passed - SEEN_IS_ENOUGH


def test_a_non_streamed_request_answered_with_a_stream_fails_content_type(
    endless_run: dict[str, tuple[str, str]],
) -> None:
    assert endless_run["CONTENT-TYPE-002"][0] == "FAIL", endless_run["CONTENT-TYPE-002"]
    verdict, message = endless_run["USAGE-010"]
    assert verdict == "SKIP" and "CONTENT-TYPE-002" in message, (verdict, message)


def test_json_nested_too_deep_fails_the_rules_of_the_body(
    deep_run: dict[str, tuple[str, str]],
) -> None:
    errors = {rule: found for rule, found in deep_run.items() if found[0] == "ERROR"}
    assert not errors
    depth = f"nested deeper than {MAX_JSON_DEPTH} levels"
    for rule_id in ("SCHEMA-001", "SSE-004"):
        verdict, message = deep_run[rule_id]
        assert verdict == "FAIL" and depth in message, (rule_id, verdict, message)
    verdict, message = deep_run["USAGE-010"]
    assert verdict == "SKIP" and "SCHEMA-001" in message, (verdict, message)


def test_a_body_that_is_not_json_passes_no_rule_that_reads_it(
    deep_run: dict[str, tuple[str, str]],
) -> None:
    for rule_id in ("FINISH-003", "IDENTITY-004", "INDICES-001", "USAGE-001"):
        verdict, message = deep_run[rule_id]
        assert verdict == "SKIP" and "SCHEMA-001" in message, (rule_id, verdict, message)


def test_an_endless_body_skips_the_rules_that_read_it(
    endless_json_run: dict[str, tuple[str, str]],
) -> None:
    errors = {rule: found for rule, found in endless_json_run.items() if found[0] == "ERROR"}
    assert not errors
    assert endless_json_run["SSE-009"][0] == "FAIL", endless_json_run["SSE-009"]
    for rule_id in ("USAGE-010", "SCHEMA-001", "IDENTITY-004"):
        verdict, message = endless_json_run[rule_id]
        assert verdict == "SKIP" and "total-bytes-limit" in message, (rule_id, verdict, message)


async def endless_error(body: bytes, writer: asyncio.StreamWriter) -> None:
    writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n\r\n"
                 b'{"error": {"message": "')
    while True:
        writer.write(b"x" * 65536)
        await writer.drain()


def test_an_error_body_cut_at_a_limit_is_no_envelope_to_judge() -> None:
    """ERRORS-003 judged a 400 body the harness stopped reading as 'not JSON'."""
    limits = dataclasses.replace(LIMITS, max_total_bytes=1 << 20)
    result = asyncio.run(against(endless_error, limits))
    verdict = next(r for r in result.results if r.rule.id == "ERRORS-003")
    assert verdict.verdict.value == "SKIP", (verdict.verdict, verdict.message)
    assert "cut at a limit of the harness" in (verdict.message or "")
