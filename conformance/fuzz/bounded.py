"""Every fuzz response body is read once, here, under the harness's limits.

Schemathesis reads a body with ``response.content``, and ``requests`` decompresses without a
bound: a 10 MB gzip body that expands to 10 GB took a run past 3 GB of memory. So the guarded
adapter (:mod:`conformance.fuzz.adapters`) reads every body itself, before schemathesis or a
check sees it: the wire bytes in chunks, decoded by the harness's bounded decoder
(:func:`conformance.transport.decoding.make_decoder`), at most ``max_total_bytes`` on the wire
and once decoded (:data:`conformance.run.settings.MAX_TOTAL_BYTES`), all under the request's
:class:`~conformance.fuzz.deadline.Watch`. The response then holds the bytes read
(``_content``) and a raw stream that replays them, so schemathesis' own readers (``content``,
its event-stream reader) go on as before, on bounded bytes.

A body cut by a limit: a JSON (or any non-stream) body is no answer at all and is raised as
:class:`ResponseTooLarge` or :class:`ResponseTooSlow`, which the guard records as a request that
got no whole answer (a finding naming the limit); an event stream keeps the events read, and
its cut (:func:`cut_of`) ends the exchange in the matching
:class:`~conformance.transport.Termination`, as ``conformance run``'s recorder does.
"""

from __future__ import annotations

import io
import json
import time
import weakref
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import requests
import schemathesis
import urllib3
from schemathesis.core import NOT_SET
from schemathesis.core.transport import STREAM_CUT_SHORT_ATTRIBUTE, is_event_stream

from conformance.transport import Limits, Termination
from conformance.transport.decoding import make_decoder
from conformance.wire_json import TooDeep, parse_json

from .deadline import Watch

CHUNK = 64 * 1024
STEP = 1 << 20
"""Decoded bytes taken at a time: a bomb's expansion never sits in memory twice over."""


@dataclass(frozen=True)
class Cut:
    """Why the harness stopped reading a body, in words that name the limit."""

    termination: Termination
    message: str


class ResponseTooLarge(requests.exceptions.ChunkedEncodingError):
    """The body passed ``max_total_bytes``, on the wire or decoded (a compression bomb)."""

    termination = Termination.TOTAL_BYTES_LIMIT


class ResponseTooSlow(requests.Timeout):
    """No whole answer (status line, headers and body) within the request's total time."""

    termination = Termination.TOTAL_TIME_LIMIT


_CUTS: weakref.WeakKeyDictionary[requests.PreparedRequest, Cut] = weakref.WeakKeyDictionary()

MAX_ARRIVALS = 4096
"""Arrival times kept of one stream (one per read): enough for its latency, bounded however
finely a server splits its bytes."""

Arrivals = tuple[tuple[int, float], ...]
"""``(bytes read so far, seconds since the request began)`` after each read of a body."""

_ARRIVALS: weakref.WeakKeyDictionary[requests.PreparedRequest, Arrivals] = (
    weakref.WeakKeyDictionary())


def arrivals_of(request: requests.PreparedRequest) -> Arrivals:
    """When the bytes of the answer to ``request`` (an event stream) arrived; empty if unknown."""
    return _ARRIVALS.get(request, ())


def cut_of(request: requests.PreparedRequest) -> Cut | None:
    """How the answer to ``request`` (an event stream) was cut short by a limit, if it was."""
    return _CUTS.get(request)


def _mib(size: int) -> str:
    return f"{size / (1 << 20):g} MiB"


def too_slow(watch: Watch, *, where: str, request: requests.PreparedRequest) -> ResponseTooSlow:
    """The error of a request whose answer did not end by the watch's deadline."""
    return ResponseTooSlow(f"no whole answer within {watch.seconds:g} s ({where}): the "
                           f"total-time-limit of one request", request=request)


class Replay:
    """The raw response as read: its headers and version, and a body replayed from memory."""

    def __init__(self, raw: Any, body: bytes) -> None:
        self._raw = raw
        self._body = io.BytesIO(body)

    def read1(self, amt: int | None = -1, decode_content: bool | None = None) -> bytes:
        return self._body.read1(-1 if amt is None else amt)

    def read(self, amt: int | None = None, decode_content: bool | None = None,
             cache_content: bool = False) -> bytes:
        return self._body.read(amt)

    def stream(self, amt: int = CHUNK, decode_content: bool | None = None) -> Iterator[bytes]:
        while chunk := self._body.read(amt):
            yield chunk

    def close(self) -> None:
        pass

    def release_conn(self) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


class BoundedJsonResponse(schemathesis.Response):
    """Schemathesis' response whose :meth:`json` is the harness's bounded parser.

    Schemathesis reads a JSON body with ``json.loads`` (its checks, its deserializer, the
    records it keeps of each response); a body nested 100,000 deep raised ``RecursionError``
    in a worker thread, which ended the run's search with nothing judged. Here such a body is
    what it is to every reader: not JSON a client can read (a ``JSONDecodeError`` naming the
    limit, which schemathesis reports as the server's).
    """

    __slots__ = ()

    def json(self) -> Any:
        if self._deserialized is NOT_SET:
            text = self.text
            try:
                self._deserialized = parse_json(text)
            except TooDeep as exc:
                raise json.JSONDecodeError(str(exc), text[:200], 0) from None
        return self._deserialized

    def truncated(self, limit: int) -> schemathesis.Response:
        """The copy schemathesis records of each response, read as boundedly (a body's first
        64 KiB nest as deep as the whole)."""
        return bounded_json(super().truncated(limit))


def bounded_json(response: schemathesis.Response) -> schemathesis.Response:
    """``response``, its JSON read by :class:`BoundedJsonResponse` (same object, same data)."""
    if type(response) is schemathesis.Response:
        response.__class__ = BoundedJsonResponse
    return response


def read_body(response: requests.Response, limits: Limits, watch: Watch) -> None:
    """Read ``response``'s body under ``limits`` and ``watch`` (see the module docstring).

    Raises :class:`ResponseTooLarge` / :class:`ResponseTooSlow` when a body that is not an
    event stream is cut, and the error ``requests`` would raise when the connection fails.
    """
    raw = response.raw
    stream = is_event_stream(response.headers.get("Content-Type"))
    arrivals: list[tuple[int, float]] = []
    try:
        buffer, cut = _read(raw, response, limits, watch, arrivals)
    finally:
        raw.close()  # a body read to its end leaves nothing; a cut one must not be reused
        raw.release_conn()
    if cut is not None and not stream:
        del buffer  # schemathesis keeps errors, and with them this frame: not the 16 MiB
        error = ResponseTooSlow if cut.termination is Termination.TOTAL_TIME_LIMIT \
            else ResponseTooLarge
        raise _after_status(error(cut.message, request=response.request), response)
    if cut is not None:  # what schemathesis keeps of a stream it cuts: the complete events
        del buffer[_events_end(buffer):]
    body = bytes(buffer)
    del buffer
    response._content = body
    response._content_consumed = True
    response.raw = Replay(raw, body)
    if cut is not None:
        setattr(response, STREAM_CUT_SHORT_ATTRIBUTE, True)
        _CUTS[response.request] = cut
    if stream and arrivals:
        _ARRIVALS[response.request] = tuple(arrivals)


def _events_end(stream: bytearray) -> int:
    """Where the last complete event of ``stream`` ends (after its blank line), or 0."""
    return max(stream.rfind(end) + len(end) if stream.rfind(end) >= 0 else 0
               for end in (b"\n\n", b"\r\n\r\n", b"\r\r"))


def _read(raw: Any, response: requests.Response, limits: Limits, watch: Watch,
          arrivals: list[tuple[int, float]]) -> tuple[bytearray, Cut | None]:
    decoder = make_decoder(response.headers.get("Content-Encoding"))
    cap = limits.max_total_bytes
    body = bytearray()
    wire = 0
    while True:
        try:
            chunk = raw.read1(CHUNK, decode_content=False)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            if watch.expired:
                chunk = b""
            else:
                raise _as_requests_error(exc, response) from exc
        if watch.expired:
            return body, Cut(Termination.TOTAL_TIME_LIMIT, str(too_slow(
                watch, where=f"the body did not end, {wire} bytes read",
                request=response.request)))
        wire += len(chunk)
        if decoder is None:
            body += chunk
        else:
            try:  # at the end (an empty chunk), what the bounded decoder held back
                data = decoder.decode(chunk, STEP)
                body += data
                while len(data) > STEP and len(body) <= cap:  # more is held back
                    data = decoder.decode(b"", STEP)
                    body += data
            except zlib.error as exc:
                raise requests.exceptions.ContentDecodingError(
                    f"the body does not decode as {response.headers.get('Content-Encoding')}: "
                    f"{exc}", request=response.request) from exc
        if chunk and len(arrivals) < MAX_ARRIVALS:
            arrivals.append((len(body), time.monotonic() - watch.started))
        if len(body) > cap or wire > cap:
            what = "decoded" if decoder is not None and len(body) > cap else "on the wire"
            del body[cap:]
            return body, Cut(Termination.TOTAL_BYTES_LIMIT, (
                f"the body passed {_mib(cap)} {what} ({wire} bytes on the wire read): the "
                f"total-bytes-limit of one response"))
        if not chunk:
            return body, None


def _as_requests_error(exc: Exception, response: requests.Response
                       ) -> requests.RequestException:
    """What ``requests`` raises for ``exc`` while it reads a body (``iter_content``)."""
    request = response.request
    error: requests.RequestException
    if isinstance(exc, urllib3.exceptions.ProtocolError):
        error = requests.exceptions.ChunkedEncodingError(exc, request=request)
    elif isinstance(exc, urllib3.exceptions.DecodeError):
        error = requests.exceptions.ContentDecodingError(exc, request=request)
    elif isinstance(exc, urllib3.exceptions.SSLError):
        error = requests.exceptions.SSLError(exc, request=request)
    else:
        error = requests.ConnectionError(exc, request=request)
    return _after_status(error, response)


STATUS_ATTRIBUTE = "conformance_status"
"""Set on an error raised while a body was read: the status the answer's status line gave
(the response itself is not kept: schemathesis keeps errors until a scenario ends)."""

_Error = TypeVar("_Error", bound=requests.RequestException)


def _after_status(error: _Error, response: requests.Response) -> _Error:
    """``error``, marked as raised after ``response``'s status line came."""
    setattr(error, STATUS_ATTRIBUTE, response.status_code)
    return error


def status_before(exc: BaseException) -> int | None:
    """The status line that came before ``exc`` broke the answer off; None when ``exc`` came
    before any status line (the connection, the request, or the status line itself failed)."""
    status = getattr(exc, STATUS_ATTRIBUTE, None)
    return status if isinstance(status, int) else None
