"""One recorded exchange, as a recording file holds it, and the same as the harness's own
:class:`~conformance.transport.Exchange`.

Every reader (:mod:`.har`, :mod:`.cassette`, :mod:`.saved`) yields :class:`Recorded` values:
the request and the response as the recorder kept them, with where they came from (the file
and the entry: ``log.entries[3]``, ``interactions[0]``) and, when the recording cannot be
judged (no response, a body the recorder cut short), why. :func:`exchange_of` turns one into an
exchange the rules read exactly as they read a probe's: the body decoded by its recorded
``Content-Encoding``, a stream parsed by the harness's SSE parser, secrets redacted on the way
in as the recorder redacts them (:func:`conformance.fuzz.exchange.recorded_request`).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from dataclasses import dataclass

from conformance.fuzz.exchange import recorded_request
from conformance.fuzz.stream import MEDIA_TYPE, parse_stream
from conformance.run.settings import MAX_TOTAL_BYTES
from conformance.transport import Exchange, Termination, Timings
from conformance.transport.decoding import make_decoder

Headers = tuple[tuple[str, str], ...]


class Unjudgeable(Exception):
    """A recorded exchange that cannot be judged, and why (said in the report, never a
    verdict on the server)."""


@dataclass(frozen=True)
class Recorded:
    """One request and its response as a recording holds them."""

    source: str
    """The file it was read from, as given."""
    entry: str
    """Where in the file: ``log.entries[3]``, ``interactions[0]``, ``exchanges["greedy/s"]``."""
    method: str
    url: str
    request_headers: Headers
    request_body: bytes
    status: int | None
    headers: Headers = ()
    body: bytes | None = None
    """The response body, still encoded when the recorder kept the wire bytes; None: the
    recording holds none."""
    reason: str | None = None
    http_version: str | None = None
    comment: str | None = None
    """The recorder's name for the entry (a HAR entry's ``comment``), if any."""
    cut: str | None = None
    """Why the recording holds only part of the body (the recorder's own limit), or None."""
    size: int | None = None
    """The body's decoded length as the recorder declares it (a HAR's ``content.size``): a
    body that decodes to less was cut by the recorder."""
    termination: Termination = Termination.EOF
    """How the recorded response ended, where the recording says (the harness's reports do:
    a connection the server dropped mid-stream is SSE-008's to judge, not a missing
    ``[DONE]``)."""
    error: str | None = None

    @property
    def label(self) -> str:
        """How a report names it: ``traffic.har log.entries[3] ("retry after timeout")``."""
        note = f' ("{self.comment[:80]}")' if self.comment else ""
        return f"{self.source} {self.entry}{note}"

    def header(self, name: str) -> str | None:
        lowered = name.lower()
        return next((value for key, value in self.headers if key.lower() == lowered), None)


def decoded(body: bytes, encoding: str | None) -> bytes:
    """``body`` decoded by its ``Content-Encoding`` (gzip, deflate), at most the bytes the
    harness reads of one response; a body that is not so encoded is returned as it is (a HAR
    keeps the decoded text under the header that named the wire's coding)."""
    decoder = make_decoder(encoding)
    if decoder is None:
        return body
    try:
        out = decoder.decode(body, MAX_TOTAL_BYTES)
    except zlib.error:
        return body
    if len(out) > MAX_TOTAL_BYTES:
        raise Unjudgeable(f"the body decodes to more than {MAX_TOTAL_BYTES >> 20} MiB, more "
                          "than the harness reads of one response")
    return out if out or not body else body


def _no_pseudo(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """HTTP/2 pseudo-headers (``:authority``) are no headers a request sets."""
    return [(name, value) for name, value in headers if not name.startswith(":")]


def exchange_of(recorded: Recorded) -> Exchange:
    """``recorded`` as the harness's exchange; :class:`Unjudgeable` when it cannot be judged."""
    if recorded.cut is not None:
        raise Unjudgeable(recorded.cut)
    if recorded.status is None or recorded.status == 0:
        raise Unjudgeable("the recording holds no response (the request got none, or the "
                          "recorder kept none)")
    if recorded.body is None:
        raise Unjudgeable(f"the recording holds no body of the HTTP {recorded.status} response")
    body = decoded(recorded.body, recorded.header("Content-Encoding"))
    if recorded.size is not None and recorded.size > len(body):
        raise Unjudgeable(f"the recorder kept {len(body)} of the body's {recorded.size} bytes "
                          "(content.size)")
    length = recorded.header("Content-Length")
    encoded = (recorded.header("Content-Encoding") or "identity").strip().lower() != "identity"
    if length is not None and length.strip().isdigit() and not encoded and (
            int(length) > len(body)):
        raise Unjudgeable(f"the body was cut short: {len(body)} of the {int(length)} bytes "
                          "Content-Length announces")
    request = recorded_request(recorded.method, recorded.url,
                               _no_pseudo(recorded.request_headers), recorded.request_body)
    media = (recorded.header("Content-Type") or "").split(";", 1)[0].strip().lower()
    # as the harness's client does: a stream is read as one, whatever its Content-Type says
    is_sse = media == MEDIA_TYPE or request.wants_stream
    parsed = parse_stream(body) if is_sse else None
    termination, error = recorded.termination, recorded.error
    if parsed is not None and parsed.halted is not None:
        termination = Termination(parsed.halted)
        error = f"SSE parser stopped: {parsed.observations[-1].message}"
    return Exchange(
        request=request, termination=termination, timings=Timings(0.0), error=error,
        status=recorded.status, reason=recorded.reason, http_version=recorded.http_version,
        headers=tuple(_no_pseudo(recorded.headers)), body=body, bytes_received=len(body),
        is_sse=is_sse,
        events=parsed.events if parsed else (),
        observations=parsed.observations if parsed else (),
        comments=parsed.comments if parsed else (),
        observation_counts=parsed.observation_counts if parsed else {},
    )
