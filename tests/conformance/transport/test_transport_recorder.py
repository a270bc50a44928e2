"""The recorder against real loopback servers, well-behaved and hostile.

Each hostile case must end in the expected termination, within the configured limits and with
bounded memory. Small limits keep the file to a few seconds.
"""

from __future__ import annotations

import asyncio
import json
import time
import tracemalloc
from collections.abc import Callable, Coroutine
from typing import Any

from raw_server import serve_raw
from transport_servers import MIB, free_port, raw_response, serve_app

from conformance.sse import codes, is_done_sentinel
from conformance.transport import (
    REDACTED,
    Exchange,
    Limits,
    Termination,
    open_session,
    record,
)

FAST = Limits(total_time=1.5, idle_timeout=0.5, connect_timeout=1.0)


def run(coro: Callable[[], Coroutine[Any, Any, Exchange]]) -> Exchange:
    return asyncio.run(coro())


async def against_app(
    path: str, limits: Limits = FAST, method: str = "GET", **kwargs: Any
) -> Exchange:
    async with serve_app() as base, open_session() as session:
        return await record(session, method, base + path, limits=limits, **kwargs)


async def against_raw(payload: bytes, limits: Limits = FAST, **options: bool) -> Exchange:
    async with serve_raw(raw_response(payload, **options)) as base, open_session() as session:
        return await record(session, "GET", base + "/", limits=limits)


def test_normal_stream_is_recorded_with_timings() -> None:
    ex = run(lambda: against_app("/sse", method="POST", json_body={"stream": True}))
    assert ex.termination is Termination.EOF and ex.error is None
    assert ex.status == 200 and ex.is_sse and ex.media_type == "text/event-stream"
    assert [e.data for e in ex.events] == ['{"i": 0}', '{"i": 1}', '{"i": 2}', "[DONE]"]
    assert is_done_sentinel(ex.events[-1]) and ex.observations == ()
    t = ex.timings
    assert t.headers_at is not None and t.first_byte_at is not None
    assert 0 < t.headers_at <= t.first_byte_at <= ex.events[0].dispatched_at <= t.ended_at
    dispatched = [e.dispatched_at for e in ex.events]
    assert dispatched == sorted(dispatched) and dispatched[-1] - dispatched[0] >= 0.02
    assert ex.body.endswith(b"data: [DONE]\n\n") and ex.bytes_received == len(ex.body)
    assert ex.request.body == b'{"stream":true}'


def test_endless_stream_hits_total_bytes_limit() -> None:
    # generous times: on a loaded machine the in-process server can pause for a second, and
    # the byte limit, not a clock, must be what ends this stream
    limits = Limits(max_total_bytes=MIB, total_time=30, idle_timeout=10)
    ex = run(lambda: against_app("/endless", limits))
    assert ex.termination is Termination.TOTAL_BYTES_LIMIT
    assert ex.bytes_received == MIB and len(ex.body) == MIB and not ex.body_truncated
    assert len(ex.events) > 1000


def test_flood_of_events_hits_event_count_limit() -> None:
    ex = run(lambda: against_app("/endless", Limits(max_events=250)))
    assert ex.termination is Termination.EVENT_COUNT_LIMIT and len(ex.events) == 250


def test_endless_stream_hits_total_time_limit() -> None:
    limits = Limits(total_time=0.6, idle_timeout=0.5)
    started = time.perf_counter()
    ex = run(lambda: against_app("/endless?slow=1", limits))
    assert ex.termination is Termination.TOTAL_TIME_LIMIT
    assert 0.6 <= ex.timings.ended_at < 1.2 and time.perf_counter() - started < 3
    assert len(ex.events) > 10 and ex.observations == ()


def test_hundred_megabyte_line_stops_after_the_line_limit() -> None:
    limits = Limits(total_time=10, idle_timeout=5)  # default 1 MiB line limit
    tracemalloc.start()
    try:
        ex = run(lambda: against_app("/long-line", limits))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert ex.termination is Termination.LINE_TOO_LONG
    assert MIB < ex.bytes_received < 2 * MIB and ex.timings.ended_at < 5
    assert [o.code for o in ex.observations] == [codes.LINE_TOO_LONG]
    assert peak < 16 * MIB


def test_slow_drip_is_never_idle_but_hits_total_time() -> None:
    ex = run(lambda: against_app("/drip?first=1"))
    assert ex.termination is Termination.TOTAL_TIME_LIMIT
    assert 1.5 <= ex.timings.ended_at < 2.2 and 3 <= ex.bytes_received <= 9
    assert ex.events == () and ex.observations == ()  # cut by us: nothing judged unterminated


def test_connection_never_closed_after_an_event_hits_idle_timeout() -> None:
    ex = run(lambda: against_app("/hang"))
    assert ex.termination is Termination.IDLE_TIMEOUT
    assert [e.data for e in ex.events] == ["only"]
    assert ex.timings.first_byte_at is not None
    assert 0.5 <= ex.timings.ended_at - ex.timings.first_byte_at < 1.2


def test_invalid_utf8_is_observed_not_fatal() -> None:
    ex = run(lambda: against_app("/invalid-utf8"))
    assert ex.termination is Termination.EOF
    assert [e.data for e in ex.events] == ['{"text": "caf\ufffd"}', "[DONE]"]
    assert [(o.code, o.offset) for o in ex.observations] == [(codes.INVALID_UTF8, 19)]


def test_close_mid_event_without_framing_is_eof_with_unterminated_event() -> None:
    payload = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
        b'data: {"a": 1}\n\ndata: {"b": '
    )
    ex = run(lambda: against_raw(payload))
    assert ex.termination is Termination.EOF
    assert [e.data for e in ex.events] == ['{"a": 1}']
    assert [o.code for o in ex.observations] == [codes.UNTERMINATED_LINE, codes.UNTERMINATED_EVENT]


def test_close_mid_chunk_is_a_connection_error_and_keeps_what_arrived() -> None:
    payload = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
        b'10\r\ndata: {"a": 1}\n\n\r\n40\r\ndata: {"b'
    )
    ex = run(lambda: against_raw(payload))
    assert ex.termination is Termination.CONNECTION_ERROR and ex.error
    assert [e.data for e in ex.events] == ['{"a": 1}']
    assert codes.UNTERMINATED_EVENT in [o.code for o in ex.observations]


def test_connection_refused_is_a_connect_error() -> None:
    async def go() -> Exchange:
        async with open_session() as session:
            return await record(session, "GET", f"http://127.0.0.1:{free_port()}/", limits=FAST)

    ex = run(go)
    assert ex.termination is Termination.CONNECT_ERROR and ex.status is None
    assert ex.error is not None and "ClientConnectorError" in ex.error


def test_never_sending_headers_hits_total_time() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(3600)

    async def go() -> Exchange:
        async with serve_raw(silent) as base, open_session() as session:
            return await record(session, "GET", base, limits=Limits(total_time=0.5))

    ex = run(go)
    assert ex.termination is Termination.TOTAL_TIME_LIMIT and ex.timings.headers_at is None
    assert 0.5 <= ex.timings.ended_at < 1.2


def test_headers_dripped_a_byte_at_a_time_hit_total_time() -> None:
    """total_time is total from the first byte sent: a status line and headers that drip in,
    each byte well within idle_timeout, never outlast it (issue 39)."""

    async def drip_headers(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 1000:
            writer.write(bytes([byte]))
            await writer.drain()
            await asyncio.sleep(0.1)

    async def go() -> Exchange:
        async with serve_raw(drip_headers) as base, open_session() as session:
            return await record(session, "GET", base,
                                limits=Limits(total_time=0.8, idle_timeout=0.3))

    ex = run(go)
    assert ex.termination is Termination.TOTAL_TIME_LIMIT and ex.status is None
    assert 0.8 <= ex.timings.ended_at < 1.5


def test_oversized_headers_are_a_connection_error() -> None:
    payload = b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n"
    ex = run(lambda: against_raw(payload, hang=True))
    assert ex.termination is Termination.CONNECTION_ERROR and ex.error and ex.status is None


def test_garbage_status_line_is_a_connection_error() -> None:
    ex = run(lambda: against_raw(b"SSH-2.0-OpenSSH\r\n\r\n"))
    assert ex.termination is Termination.CONNECTION_ERROR and ex.error


def test_response_headers_keep_case_order_and_repeats() -> None:
    payload = (
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Thing: a\r\nx-thing: b\r\n"
        b"content-TYPE: application/json\r\n\r\n{}"
    )
    ex = run(lambda: against_raw(payload))
    assert ex.headers == (
        ("Content-Length", "2"),
        ("X-Thing", "a"),
        ("x-thing", "b"),
        ("content-TYPE", "application/json"),
    )
    assert ex.header_values("X-THING") == ["a", "b"] and not ex.is_sse and ex.body == b"{}"


def test_sse_parsing_can_be_forced_or_refused() -> None:
    payload = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 9\r\n\r\ndata: x\n\n"
    forced = run(lambda: against_raw_forced(payload, True))
    assert forced.is_sse and [e.data for e in forced.events] == ["x"]
    refused = run(lambda: against_app("/sse", sse=False))
    assert not refused.is_sse and refused.events == () and b"[DONE]" in refused.body


async def against_raw_forced(payload: bytes, sse: bool) -> Exchange:
    async with serve_raw(raw_response(payload)) as base, open_session() as session:
        return await record(session, "GET", base, limits=FAST, sse=sse)


def test_body_beyond_max_body_bytes_is_counted_not_kept() -> None:
    ex = run(lambda: against_app("/big-json", Limits(max_body_bytes=1000)))
    assert ex.termination is Termination.EOF and ex.body_truncated
    assert len(ex.body) == 1000 and ex.bytes_received == MIB + 3


def test_gzip_despite_identity_is_decoded_for_the_parser_but_recorded_raw() -> None:
    ex = run(lambda: against_app("/gzip"))
    assert ex.content_encoding == "gzip" and ex.body[:2] == b"\x1f\x8b"
    assert [e.data for e in ex.events] == ["zipped"] * 3 and ex.observations == ()


def test_redirects_are_not_followed() -> None:
    ex = run(lambda: against_app("/redirect"))
    assert ex.status == 302 and ex.header("Location") == "/sse" and ex.events == ()


def test_request_is_sent_as_given_and_recorded_redacted() -> None:
    headers = [("Authorization", "Bearer sk-secret"), ("X-Api-Key", "k"), ("X-Team", "blue")]
    ex = run(
        lambda: against_app(
            "/echo?api_key=abc&n=1",
            method="post",
            json_body={"prompt": "it's\nhere", "n": 1},
            headers=headers,
            secret_headers=["X-Team"],
        )
    )
    sent = json.loads(ex.body)
    assert sent["method"] == "POST"
    assert ["Authorization", "Bearer sk-secret"] in sent["headers"]
    assert ["Accept-Encoding", "identity"] in sent["headers"]
    assert json.loads(sent["body"]) == {"prompt": "it's\nhere", "n": 1}
    assert ex.request.headers == (
        ("Authorization", REDACTED),
        ("X-Api-Key", REDACTED),
        ("X-Team", REDACTED),
        ("Content-Type", "application/json"),
        ("Accept-Encoding", "identity"),
    )
    assert "abc" not in ex.request.url and "n=1" in ex.request.url
    assert "sk-secret" not in repr(ex.request)


def test_cancellation_propagates_and_closes() -> None:
    async def go() -> None:
        async with serve_app() as base, open_session() as session:
            task = asyncio.create_task(record(session, "GET", base + "/hang", limits=FAST))
            await asyncio.sleep(0.2)
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                return
            raise AssertionError("cancellation was swallowed")

    asyncio.run(go())


def test_session_from_open_session_does_not_decompress() -> None:
    async def go() -> bool:
        async with open_session() as session:
            return session.auto_decompress

    assert asyncio.run(go()) is False
