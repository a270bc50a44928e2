"""Stage three of ``POST /v1/completions``: render the answer and write it.

A whole answer is one ``application/json`` body (after the simulated latency, through the
``payload`` and ``header`` faults; a long one, or one a ``writer`` fault bends, is written in
pieces). A stream is ``text/event-stream`` (``streaming.send_stream``): straight to bytes when
nothing needs the chunks, else through the ``chunk`` and ``frame`` faults. Tokens are charged
to the rate limiter once they are known.

Valid rendering variants (``--variant``, ``X-Mock-Variant``; :mod:`mockserver.variants`) are
applied here, after the answer is kept for repeats: the result cache only ever holds the
default rendering, and a request with no variant is written exactly as before.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator

from aiohttp import web

from reference_engine.results import Completion, Event, UsageEvent

from .. import sse
from ..faults import AbortConnection, Write
from ..variants import ActiveVariants, StreamContext
from ..wire import Identity, identity_prefix, stream_chunks, stream_frames
from .answer_bytes import render
from .budgeted_jobs import batches, maybe_off_loop
from .cache import Answer
from .generate import Rendered, Source
from .intake import Plan
from .off_loop_thresholds import heavy_answer
from .ratelimit import Admission
from .state import CACHE, LATENCY, LIMITER, REQUEST_STATE
from .streaming import send_stream

JSON_TYPE = "application/json"
PIECEWISE_BYTES = 1 << 20
"""Answers larger than this are written in pieces of PIECE_BYTES (``_send_in_pieces``)."""
PIECE_BYTES = 256 * 1024


def variants(request: web.Request) -> ActiveVariants:
    """The request's rendering variants, as the gate resolved them."""
    return request[REQUEST_STATE].variants


def _bent(encoded: bytes, active: ActiveVariants) -> bytes:
    """A whole answer's bytes in the request's variants (the default's when none bends it)."""
    if not active.bend_body:
        return encoded
    body = json.loads(encoded)
    return sse.encode_json(active.alter_body(body)) if isinstance(body, dict) else encoded


async def kept(request: web.Request, answer: Answer) -> web.Response:
    """A kept answer with a fresh identity (the model and fingerprint are in its tail)."""
    active = variants(request)
    identity = Identity.new(model="")
    await _wait(request, answer.completion_tokens)
    prefix = identity_prefix(identity, wire=request[REQUEST_STATE].route.wire)
    return web.Response(body=_bent(prefix + answer.tail, active),
                        headers={"Content-Type": JSON_TYPE})


async def whole(request: web.Request, plan: Plan,
                made: Completion | Rendered) -> web.StreamResponse:
    """The non-streamed answer; kept rendered for a repeat when ``plan.answer_key`` says so."""
    state, active = request[REQUEST_STATE], variants(request)
    if isinstance(made, Rendered):
        encoded, usage = made.encoded, made.usage
    else:
        completion = made
        encoded = await maybe_off_loop(request, heavy_answer(completion), lambda: render(
            completion, plan.identity, wire=state.route.wire, suffix=plan.options.suffix,
            faults=state.faults, ctx=state.ctx))
        usage = made.usage
    await _wait(request, usage.completion_tokens)
    _charge(request, state.admission, usage.total_tokens)
    headers = state.faults.alter_headers({"Content-Type": JSON_TYPE}, state.ctx)
    if plan.answer_key is not None:
        prefix = identity_prefix(plan.identity, wire=state.route.wire)
        if encoded.startswith(prefix):
            request.app[CACHE].keep_answer(
                plan.answer_key, Answer(encoded[len(prefix):], usage.completion_tokens))
    encoded = _bent(encoded, active)
    if state.faults and state.faults.has("writer", state.ctx):  # a fault bends the writes
        return await _send_in_pieces(request, encoded, headers,
                                     wrap=lambda write: state.faults.wrap_write(write, state.ctx))
    if len(encoded) > PIECEWISE_BYTES:
        return await _send_in_pieces(request, encoded, headers)
    return web.Response(body=encoded, headers=headers)


async def stream(request: web.Request, plan: Plan, source: Source) -> web.StreamResponse:
    """The stream of ``source``'s events, as they come."""
    state, options = request[REQUEST_STATE], plan.options
    wire = state.route.wire
    usage: list[int] = []
    latency, active = request.app[LATENCY], variants(request)
    frames: Iterator[sse.Frame | bytes]
    if not state.faults and not latency.enabled and not active:  # straight to bytes
        frames = stream_frames(_tap_usage(source.events, usage), plan.identity, wire=wire,
                               include_usage=options.include_usage, logprobs=options.logprobs,
                               suffix=options.suffix)
    else:
        chunks = stream_chunks(_tap_usage(source.events, usage), plan.identity, wire=wire,
                               include_usage=options.include_usage, logprobs=options.logprobs,
                               suffix=options.suffix)
        if active:
            chunks = active.alter_chunks(
                chunks, StreamContext(include_usage=options.include_usage,
                                      echo=plan.generation.echo))
        frames = active.alter_frames(state.faults.alter_frames(
            sse.frames(state.faults.alter_chunks(chunks, state.ctx)), state.ctx))
    headers = state.faults.alter_headers(
        {"Content-Type": sse.CONTENT_TYPE, "Cache-Control": "no-cache",
         "X-Accel-Buffering": "no"},
        state.ctx,
    )
    response = await send_stream(request, frames, headers=headers, faults=state.faults,
                                 ctx=state.ctx, latency=latency, close=source.close,
                                 off_loop=batches(request) if source.off_loop else None)
    _charge(request, state.admission, sum(usage))
    return response


async def _wait(request: web.Request, completion_tokens: int) -> None:
    """The simulated latency of a whole answer of ``completion_tokens``."""
    delay = request.app[LATENCY].whole(completion_tokens)
    if delay > 0:
        await asyncio.sleep(delay)


async def _send_in_pieces(request: web.Request, encoded: bytes, headers: dict[str, str], *,
                          wrap: Callable[[Write], Write] | None = None) -> web.StreamResponse:
    """A large body written a piece at a time (same bytes, same ``Content-Length``): one
    write of 50 MB holds the event loop for a tenth of a second copying it into buffers.
    ``wrap`` lets a ``writer`` fault bend the writes (cut the body short)."""
    response = web.StreamResponse(headers=headers)
    response.content_length = len(encoded)
    view = memoryview(encoded)
    faulty = wrap(response.write) if wrap is not None else None
    try:
        await response.prepare(request)
        for at in range(0, len(encoded), PIECE_BYTES):
            piece = view[at:at + PIECE_BYTES]
            await (faulty(bytes(piece)) if faulty is not None else response.write(piece))
        await response.write_eof()
    except ConnectionError:  # the client left; nothing more to say
        pass
    except AbortConnection:  # a fault drops the connection mid-body
        if request.transport is not None:
            request.transport.close()
    return response


def _tap_usage(events: Iterator[Event], usage: list[int]) -> Iterator[Event]:
    for event in events:
        if isinstance(event, UsageEvent):
            usage.append(event.usage.total_tokens)
        yield event


def _charge(request: web.Request, admission: Admission | None, tokens: int) -> None:
    limiter = request.app.get(LIMITER)
    if limiter is not None and admission is not None and tokens:
        limiter.charge(admission, tokens)
