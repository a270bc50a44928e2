"""Turn a recorded request into a ``curl`` command that reproduces it when pasted in a shell.

Everything is single-quoted (``shlex.quote``: ``'`` becomes ``'"'"'``) and the body is inlined
with ``--data-raw`` (no ``@file``, no stdin), so the command is self-contained. Secret headers
become shell variables inside *double* quotes so the shell expands them, e.g.
``-H "Authorization: Bearer $OPENAI_API_KEY"`` or ``-H "X-Api-Key: $X_API_KEY"``: export the
variable before pasting. ``-N`` (no buffering) is added for streams. A body that is not UTF-8 or
holds NUL bytes (which no argument can carry) is produced by bash process substitution,
``--data-binary @<(printf %b '...')``. A request that went through a proxy or with TLS options
carries them (``--proxy "$PROXY"``, ``--cacert FILE``, ``--insecure``...); the TLS ones only
for an ``https://`` URL, so a plain HTTP command does not name a CA bundle it never uses.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from urllib.parse import urlsplit

from .exchange import Exchange, RecordedRequest
from .redact import REDACTED, is_secret_header

AUTH_VARIABLE = "OPENAI_API_KEY"
"""The variable the ``Authorization`` header refers to (sent as ``Bearer $OPENAI_API_KEY``)."""

_SKIPPED = frozenset({"host", "content-length"})  # curl computes these itself
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_-]+")


def secret_variable(header: str) -> str:
    """The shell variable standing for a secret header: ``X-Api-Key`` -> ``X_API_KEY``."""
    if header.lower() == "authorization":
        return AUTH_VARIABLE
    name = re.sub(r"[^A-Za-z0-9]+", "_", header).strip("_").upper() or "SECRET"
    return f"_{name}" if name[0].isdigit() else name


def _secret_header(name: str) -> str:
    variable = secret_variable(name)
    value = f"Bearer ${variable}" if name.lower() == "authorization" else f"${variable}"
    if _PLAIN_NAME.fullmatch(name):
        return f'"{name}: {value}"'
    return f'{shlex.quote(name + ": ")}"{value}"'


def _body_args(body: bytes) -> list[str]:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and "\0" not in text:
        return ["--data-raw", shlex.quote(text)]
    escaped = "".join(
        chr(b) if 0x20 <= b < 0x7F and b not in (0x5C, 0x25) else f"\\0{b:03o}" for b in body
    )
    return ["--data-binary", f"@<(printf %b {shlex.quote(escaped)})"]


def to_curl(
    exchange_or_request: Exchange | RecordedRequest,
    redact: bool = True,
    *,
    secret_headers: Iterable[str] = (),
    stream: bool | None = None,
) -> str:
    """A one-line curl command for the request.

    With ``redact`` (the default) every secret header (see
    :func:`~conformance.transport.redact.is_secret_header`) becomes a variable; without it,
    values are inlined, except those already recorded as ``<redacted>``, which stay variables.
    ``stream`` defaults to whether the response was SSE or the JSON body asks to stream.
    """
    if isinstance(exchange_or_request, Exchange):
        request = exchange_or_request.request
        is_stream = exchange_or_request.is_sse or request.wants_stream
    else:
        request = exchange_or_request
        is_stream = request.wants_stream
    if stream is not None:
        is_stream = stream
    secret = tuple(secret_headers)
    parts = ["curl", "-sS"]
    if is_stream:
        parts.append("-N")
    if request.method != ("POST" if request.body else "GET"):
        parts += ["-X", shlex.quote(request.method)]
    if request.network is not None:
        parts += request.network.curl_args(tls=urlsplit(request.url).scheme == "https")
    parts.append(shlex.quote(request.url))
    for name, value in request.headers:
        if name.lower() in _SKIPPED:
            continue
        if value == REDACTED or (redact and is_secret_header(name, secret)):
            parts += ["-H", _secret_header(name)]
        else:
            parts += ["-H", shlex.quote(f"{name}: {value}")]
    if request.body:
        parts += _body_args(request.body)
    return " ".join(parts)
