"""Record one HTTP exchange over a real connection, within hard limits.

The body is read with ``response.content.readany()`` as bytes arrive; each read waits at most
``min(idle time left, total time left)`` (``asyncio.wait_for``, so Python 3.10 works). Bytes are
fed to the strict SSE parser (:mod:`conformance.sse`) as they come, so event times are arrival
times. Any limit closes the connection at once; nothing is buffered beyond the limits. Every
failure becomes a :class:`~conformance.transport.limits.Termination` with a message: no exception
leaves :func:`record` except cancellation (and ``ValueError`` for contradictory arguments).

The request is sent with aiohttp's ``auto_decompress=False`` and, unless the caller set one,
``Accept-Encoding: identity``, so the recorded body is the bytes on the wire; redirects are not
followed (a redirect is itself a finding).

A session made by :func:`open_session` also says, for each exchange, whether its request went
out on a kept-alive connection that had carried an earlier one (``Exchange.reused_connection``,
from aiohttp's connection tracing): a server may close such a connection just as a request goes
out on it, which is the pool's race, not the server's failure
(:func:`~conformance.transport.limits.lost_on_reused_connection`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Mapping
from types import SimpleNamespace

import aiohttp

from conformance.sse import SSEParser

from .budget import MemoryBudget
from .decoding import make_decoder
from .exchange import Exchange, RecordedRequest
from .failures import classify
from .json_types import JSON
from .limits import Limits, Termination
from .network import DIRECT, Network
from .recording import Recording
from .redact import redact_headers, redact_url

DEFAULT_LIMITS = Limits()

# aiohttp < 3.10 has no ConnectionTimeoutError; its parent is only raised while connecting here,
# because the recorder sets no sock_read timeout
_CONNECT_TIMEOUT = getattr(aiohttp, "ConnectionTimeoutError", aiohttp.ServerTimeoutError)
_CONNECT_ERRORS = (aiohttp.ClientConnectorError, _CONNECT_TIMEOUT, aiohttp.InvalidURL,
                   aiohttp.NonHttpUrlClientError)


async def _on_reuse(session: aiohttp.ClientSession, context: SimpleNamespace,
                    params: aiohttp.TraceConnectionReuseconnParams) -> None:
    _mark(context, reused=True)


async def _on_new_connection(session: aiohttp.ClientSession, context: SimpleNamespace,
                             params: aiohttp.TraceConnectionCreateEndParams) -> None:
    _mark(context, reused=False)


def _mark(context: SimpleNamespace, *, reused: bool) -> None:
    """Note on :func:`record`'s marker whether the request's connection was reused (the last
    connection taken counts: aiohttp may take a new one after a dead pooled one)."""
    marker = getattr(context, "trace_request_ctx", None)
    if isinstance(marker, SimpleNamespace):
        marker.reused = reused


def _connection_trace() -> aiohttp.TraceConfig:
    trace = aiohttp.TraceConfig()
    trace.on_connection_reuseconn.append(_on_reuse)
    trace.on_connection_create_end.append(_on_new_connection)
    return trace


def open_session(**kwargs: object) -> aiohttp.ClientSession:
    """A session suited to :func:`record`: no automatic decompression, no cookie jar (each
    exchange stands alone), and a trace telling each exchange whether its connection was
    reused. Call it inside a running event loop; extra kwargs go to aiohttp."""
    options: dict[str, object] = {
        "auto_decompress": False,
        "cookie_jar": aiohttp.DummyCookieJar(),
    }
    options.update(kwargs)
    traces = list(options.get("trace_configs") or [])  # type: ignore[call-overload]
    options["trace_configs"] = [*traces, _connection_trace()]
    return aiohttp.ClientSession(**options)  # type: ignore[arg-type]


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def record(
    session: aiohttp.ClientSession,
    method: str,
    url: str,
    *,
    json_body: JSON = None,
    body: bytes | None = None,
    headers: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
    limits: Limits = DEFAULT_LIMITS,
    sse: bool | None = None,
    secret_headers: Iterable[str] = (),
    network: Network = DIRECT,
    budget: MemoryBudget | None = None,
) -> Exchange:
    """Send one request and record the response within ``limits``.

    ``json_body`` is serialised compactly as UTF-8 (``Content-Type: application/json`` added
    unless given); ``body`` sends bytes as they are; passing both is a ``ValueError``. ``sse``
    forces (``True``) or forbids (``False``) SSE parsing; ``None`` parses when the response's
    media type is ``text/event-stream``. ``secret_headers`` names extra headers to redact.
    ``network`` says how to reach the server (TLS trust, client certificate, proxy).
    ``budget`` is the run's memory budget the kept body and events are taken from.
    """
    if json_body is not None and body is not None:
        raise ValueError("pass json_body or body, not both")
    secret = tuple(secret_headers)
    items = list(headers.items() if isinstance(headers, Mapping) else headers or ())
    names = {name.lower() for name, _ in items}
    if json_body is not None:
        body = json.dumps(json_body, ensure_ascii=False, separators=(",", ":")).encode()
        if "content-type" not in names:
            items.append(("Content-Type", "application/json"))
    if "accept-encoding" not in names:
        items.append(("Accept-Encoding", "identity"))
    request = RecordedRequest(
        method.upper(), redact_url(url, secret), redact_headers(items, secret), body or b"",
        network=None if network == DIRECT else network.redacted(),
    )
    state = Recording(request, limits, budget)
    connection = {**network.aiohttp_kwargs(url), "trace_request_ctx": state.connection}
    try:
        await _exchange(state, session, url, items, body, sse, connection)
    except _CONNECT_ERRORS as exc:
        state.stop(Termination.CONNECT_ERROR, _describe(exc), classify(exc))
    except Exception as exc:  # every other failure is the connection's: record, never raise
        state.stop(Termination.CONNECTION_ERROR, _describe(exc), classify(exc))
        state.head_began = _head_began(exc)
    return state.build()


def _head_began(exc: BaseException) -> bool:
    """True when bytes of an answer arrived before the failure though no whole status line and
    headers did: aiohttp's parser had begun a message (a ``ServerDisconnectedError`` carrying
    the message parsed so far, not its default text) or could not parse what came (a
    ``ClientResponseError``). A reset may have dropped bytes unread: it counts as none."""
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return not isinstance(exc.message, str)
    return isinstance(exc, aiohttp.ClientResponseError)


async def _exchange(
    state: Recording,
    session: aiohttp.ClientSession,
    url: str,
    items: list[tuple[str, str]],
    body: bytes | None,
    sse: bool | None,
    connection: dict[str, object],
) -> None:
    limits = state.limits
    timeout = aiohttp.ClientTimeout(
        total=None, connect=None, sock_connect=limits.connect_timeout, sock_read=None
    )

    async def send() -> aiohttp.ClientResponse:
        return await session.request(
            state.request.method,
            url,
            data=body,
            headers=items,
            allow_redirects=False,
            auto_decompress=False,
            timeout=timeout,
            **connection,  # type: ignore[arg-type]
        )

    try:
        state.response = await asyncio.wait_for(send(), limits.total_time - state.now())
    except asyncio.TimeoutError as exc:
        if isinstance(exc, aiohttp.ClientError):
            raise
        state.stop(Termination.TOTAL_TIME_LIMIT, "no response headers within total_time")
        return
    response = state.response
    state.headers_at = state.now()
    media_type = response.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
    if sse if sse is not None else media_type == "text/event-stream":
        state.parser = SSEParser(
            max_line_bytes=limits.max_line_bytes, max_event_bytes=limits.max_event_bytes
        )
        state.decoder = make_decoder(response.headers.get("Content-Encoding"))
    clean = False
    try:
        await _read_body(state, response)
        clean = state.termination is Termination.EOF
    finally:
        if clean:
            response.release()  # the body was read to its end: the connection may be reused
        else:
            response.close()


def _salvage(state: Recording, response: aiohttp.ClientResponse) -> None:
    """Keep bytes that arrived before a connection failure.

    aiohttp's ``readany()`` raises a stored error (say, a chunked body cut short) before handing
    out data still buffered, so a server that writes its last events and then breaks the
    connection would lose them. This reads that buffer through aiohttp's private
    ``_read_nowait``; if that ever disappears, nothing is salvaged and nothing breaks.
    """
    read_buffered = getattr(response.content, "_read_nowait", None)
    if read_buffered is None:
        return
    try:
        chunk = read_buffered(-1)
    except Exception:
        return
    if isinstance(chunk, bytes) and chunk:
        state.take(chunk, state.now())


async def _read_body(state: Recording, response: aiohttp.ClientResponse) -> None:
    try:
        await _read_chunks(state, response)
    except aiohttp.ClientPayloadError:
        _salvage(state, response)
        raise


async def _read_chunks(state: Recording, response: aiohttp.ClientResponse) -> None:
    limits = state.limits
    last_bytes_at = state.headers_at or 0.0
    while True:
        now = state.now()
        total_left = limits.total_time - now
        idle_left = last_bytes_at + limits.idle_timeout - now
        if total_left <= 0 or idle_left <= 0:
            break
        try:
            chunk = await asyncio.wait_for(response.content.readany(), min(total_left, idle_left))
        except asyncio.TimeoutError as exc:
            if isinstance(exc, aiohttp.ClientError):
                raise
            break
        now = state.now()
        if not chunk:
            return  # end of body: termination stays EOF
        last_bytes_at = now
        if not state.take(chunk, now):
            return
    # a deadline passed: say which
    if limits.total_time <= last_bytes_at + limits.idle_timeout:
        state.stop(Termination.TOTAL_TIME_LIMIT, f"body not finished within {limits.total_time} s")
    else:
        state.stop(Termination.IDLE_TIMEOUT, f"no bytes for {limits.idle_timeout} s")
