"""Reading a request body as a JSON object: size, media type, UTF-8 and JSON syntax.

Spec: the ``413`` (``PayloadTooLarge``) and ``415`` (``UnsupportedMediaType``) responses, and the
invalid-request statuses of the routes (400 OpenAI, 422 FriendliAI) for bodies that are not
UTF-8 JSON. ``NaN`` and ``Infinity`` are not JSON and are rejected too, and so are bodies whose
``Content-Encoding`` does not decode and JSON nested deeper than :data:`MAX_DEPTH` (everything
downstream walks bodies recursively; no valid request comes near that depth). A
refused body is not parsed further (:func:`_discard_rest`): a compressed one is never inflated
past ``--max-body-bytes``.
"""

from __future__ import annotations

import asyncio
import json
import re

from aiohttp import web

from spec import JSON

from ..errors import ApiError

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
MAX_DEPTH = 64
"""Nesting levels of arrays and objects a body may have (a JSON schema in FriendliAI's
``response_format`` is the deepest valid field, a few levels deep)."""


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
"""What ``json.loads(text, parse_constant=_reject_constant)`` builds on every call."""


def _loads(text: str) -> JSON:
    """``json.loads(text, parse_constant=_reject_constant)``, without a decoder per call."""
    if text.startswith("\ufeff"):  # as json.loads does for str input
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    return _DECODER.decode(text)


async def read_body(request: web.Request, *, max_bytes: int, invalid_status: int = 400,
                    read_timeout: float | None = None) -> bytes:
    """The raw body of a JSON request; raises :class:`ApiError` 413, 415, 408 (not all there
    within ``read_timeout`` seconds) or ``invalid_status`` (a body its ``Content-Encoding`` does
    not decode). A client that leaves mid-body raises ``ConnectionError``."""
    media_type = request.content_type  # aiohttp lower-cases and strips parameters
    if media_type != "application/json" and not media_type.endswith("+json"):
        raise ApiError(
            415,
            f"Unsupported Content-Type {request.headers.get('Content-Type', '(none)')!r}: send "
            "the body as JSON with `Content-Type: application/json`.",
            code="unsupported_media_type",
        )
    charset = request.charset
    if charset is not None and charset.lower().replace("-", "") != "utf8":
        raise ApiError(415, f"Unsupported charset {charset!r}: JSON bodies must be UTF-8.",
                       code="unsupported_media_type")
    length = request.content_length
    if length is not None and length > max_bytes:
        _discard_rest(request)
        raise _too_large(max_bytes)
    try:
        raw = await _read(request, read_timeout)
    except web.HTTPRequestEntityTooLarge:
        _discard_rest(request)
        raise _too_large(max_bytes) from None
    except asyncio.TimeoutError:
        _discard_rest(request)
        request.content.feed_eof()  # and close right after the answer: the client is too slow
        raise ApiError(408, f"The request body did not arrive within {read_timeout:g} s; send it "
                       "at once, or start the mock with a larger --read-timeout.",
                       code="request_timeout") from None
    except web.RequestPayloadError:
        encoding = request.headers.get("Content-Encoding")
        said = f" (Content-Encoding: {encoding})" if encoding else ""
        raise ApiError(invalid_status,
                       f"The request body could not be read{said}: send it as plain UTF-8 JSON, "
                       "or encoded the way its Content-Encoding says.",
                       code="invalid_encoding") from None
    if len(raw) > max_bytes:
        raise _too_large(max_bytes)
    return raw


async def _read(request: web.Request, timeout: float | None) -> bytes:
    """The body, within ``timeout`` seconds (no timer when it has all arrived already)."""
    if timeout is None or request.content.is_eof():
        return await request.read()
    return await asyncio.wait_for(request.read(), timeout)


def _discard_rest(request: web.Request) -> None:
    """Parse nothing more of this connection: answer, discard what still arrives, then close.

    aiohttp otherwise keeps feeding the rest of a refused body to its parser (inflating it, for
    ``Content-Encoding: gzip``) for up to its lingering time after the answer, so a small gzip
    bomb cost seconds of CPU on the event loop after its 413. A connection marked as closing
    has further bytes dropped unparsed; aiohttp still waits its lingering time before closing,
    so a client that is still sending can finish and read the answer (closing at once would
    reset the connection under it).
    """
    protocol = request.protocol
    if protocol is not None:
        protocol.close()


def parse_json(raw: bytes, invalid_status: int) -> JSON:
    """``raw`` (a body from :func:`read_body`) parsed; raises :class:`ApiError`
    ``invalid_status`` for an empty body, bad UTF-8, bad JSON or a lone surrogate escape."""
    if not raw.strip():
        raise ApiError(invalid_status, "The request body is empty: send a JSON object.",
                       code="invalid_json")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ApiError(invalid_status,
                       f"The request body is not valid UTF-8 (byte {error.start}).",
                       code="invalid_encoding") from None
    try:
        body = _loads(text)
    except (ValueError, RecursionError) as error:
        raise ApiError(invalid_status, f"The request body is not valid JSON: {error}",
                       code="invalid_json") from None
    if _deeper_than(body, MAX_DEPTH):
        raise ApiError(invalid_status,
                       f"The request body nests arrays and objects deeper than {MAX_DEPTH} "
                       "levels.", code="invalid_json")
    if _SURROGATE_ESCAPE.search(text):
        _reject_lone_surrogates(body, invalid_status)
    return body


def _deeper_than(value: JSON, limit: int) -> bool:
    """Whether ``value`` nests more than ``limit`` arrays / objects (walked without recursion)."""
    if not isinstance(value, (dict, list)):
        return False
    level: list[JSON] = [value]
    for _ in range(limit):
        below: list[JSON] = []
        for item in level:
            children = item.values() if isinstance(item, dict) else item
            below.extend(c for c in children if isinstance(c, (dict, list)))
        if not below:
            return False
        level = below
    return True


def _reject_lone_surrogates(body: JSON, invalid_status: int) -> None:
    """``"\\ud800"`` parses, but is no Unicode character: nothing downstream could encode it."""
    try:
        json.dumps(body, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ApiError(
            invalid_status,
            "The request body contains a lone UTF-16 surrogate escape (\\ud800-\\udfff "
            "without its pair), which is not a Unicode character.",
            code="invalid_encoding",
        ) from None
    except (ValueError, RecursionError):
        pass


def _too_large(max_bytes: int) -> ApiError:
    return ApiError(
        413,
        f"The request body exceeds {max_bytes} bytes; send a smaller one or start the mock with "
        "a larger --max-body-bytes.",
        code="request_too_large",
    )
