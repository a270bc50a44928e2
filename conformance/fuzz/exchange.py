"""A schemathesis response as the harness's :class:`~conformance.transport.Exchange`.

The rules read recorded exchanges (status, headers, raw bytes, parsed events); schemathesis
hands its checks a ``Response`` whose body it already read. This module is the one adapter
between them, so a rule judges a fuzzed response exactly as it judges a probe's. Secrets are
redacted on the way in (the API key, every ``--header`` value), as the recorder does.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

import requests
import schemathesis

from conformance.run.settings import MAX_EVENTS
from conformance.transport import (
    Exchange,
    RecordedRequest,
    Termination,
    Timings,
    redact_headers,
    redact_url,
)

from .bounded import arrivals_of, cut_of
from .stream import MEDIA_TYPE, parsed_stream_of

SKIPPED_HEADERS = frozenset(
    {"user-agent", "accept-encoding", "accept", "connection", "content-length",
     "x-schemathesis-testcaseid"}
)
"""Request headers the HTTP client adds by itself: left out of recordings and curl commands."""


def recorded_request(
    method: str,
    url: str,
    headers: Iterable[tuple[str, str]],
    body: bytes | str | None,
    *,
    secret_headers: Iterable[str] = (),
) -> RecordedRequest:
    """The request as the harness records it: client-added headers dropped, secrets redacted."""
    secret = tuple(secret_headers)
    kept = [(name, value) for name, value in headers if name.lower() not in SKIPPED_HEADERS]
    raw = body.encode("utf-8") if isinstance(body, str) else (body or b"")
    return RecordedRequest(method.upper(), redact_url(url, secret),
                           redact_headers(kept, secret), raw)


def prepared_request(prepared: requests.PreparedRequest, *, secret_headers: Iterable[str] = ()
                     ) -> RecordedRequest:
    """A ``requests`` prepared request as the harness records it."""
    headers = [
        (name, value.decode("latin-1") if isinstance(value, bytes) else value)
        for name, value in prepared.headers.items()
    ]
    body = prepared.body if isinstance(prepared.body, (bytes, str)) else None
    return recorded_request(str(prepared.method), str(prepared.url), headers, body,
                            secret_headers=secret_headers)


def request_of(response: schemathesis.Response, *, secret_headers: Iterable[str] = ()
               ) -> RecordedRequest:
    return prepared_request(response.request, secret_headers=secret_headers)


def to_exchange(response: schemathesis.Response, *, secret_headers: Iterable[str] = ()
                ) -> Exchange:
    """The response as an exchange; a stream is parsed by the harness's SSE parser.

    A stream schemathesis stopped reading (its event limit), or that the bounded reader cut
    (:mod:`conformance.fuzz.bounded`: bytes, total time), ends in the matching harness limit, so
    the framing rules do not mistake the cut for the server's end.
    """
    headers = tuple(
        (name, value) for name, values in response.headers.items() for value in values
    )
    media = (response.headers.get("content-type") or [""])[0].split(";", 1)[0].strip().lower()
    request = request_of(response, secret_headers=secret_headers)
    # as the harness's client does: a stream is read as one, whatever its Content-Type says
    is_sse = media == MEDIA_TYPE or request.wants_stream
    parsed = parsed_stream_of(response) if is_sse else None
    termination, error = Termination.EOF, None
    cut = cut_of(response.request)
    arrivals = arrivals_of(response.request) if is_sse else ()
    if parsed is not None and parsed.halted is not None:
        termination = Termination(parsed.halted)
        error = f"SSE parser stopped: {parsed.observations[-1].message}"
    elif cut is not None and not (parsed is not None and len(parsed.events) >= MAX_EVENTS):
        termination, error = cut.termination, cut.message  # a harness limit, named
    elif response.stream_cut_short:
        count = len(parsed.events) if parsed is not None else 0
        termination = (Termination.EVENT_COUNT_LIMIT if count >= MAX_EVENTS
                       else Termination.TOTAL_TIME_LIMIT)
        error = f"the stream was cut after {count} events ({termination})"
    return Exchange(
        request=request,
        termination=termination,
        timings=Timings(started_wall=time.time() - response.elapsed, headers_at=None,
                        first_byte_at=arrivals[0][1] if arrivals else None,
                        ended_at=response.elapsed),
        error=error,
        status=response.status_code,
        reason=response.message,
        http_version=response.http_version,
        headers=headers,
        body=response.content,
        body_truncated=response.content_size > len(response.content),
        bytes_received=response.content_size,
        is_sse=is_sse,
        events=parsed.events if parsed else (),
        observations=parsed.observations if parsed else (),
        comments=parsed.comments if parsed else (),
        observation_counts=parsed.observation_counts if parsed else {},
    )
