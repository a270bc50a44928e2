"""The completions handler: ``POST /v1/completions`` and ``POST /dedicated/v1/completions``.

One handler serves both routes; the route says which wire profile applies. Order: body,
validation (schema, cross-field rules, model), ``validation`` faults, ``body`` faults, wire
conversion, the engine's own checks -- all before a byte of the answer is sent. Then: parse,
call the engine, serialise.

A repeat of a deterministic non-streamed request that nothing can bend (no fault, no chaos,
no rate limit) is answered from the result cache's rendered answers, keyed by its exact body
bytes: only the media type and size checks run again, and a fresh ``id`` / ``created``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from typing import TypeVar

from aiohttp import web

from reference_engine.errors import InvalidRequestError
from reference_engine.request import GenerationRequest
from reference_engine.results import Completion, Event, Usage, UsageEvent
from spec import JSON

from .. import sse
from ..errors import ApiError
from ..faults import AbortConnection, Verdict, Write
from ..wire import (
    Identity,
    WireOptions,
    build_request,
    completion_body,
    identity_prefix,
    stream_chunks,
    stream_frames,
)
from . import generate, sizing
from .body import parse_json, read_body
from .cache import MAX_ENTRY_UNITS, Answer, AnswerKey, CacheKey
from .prompt_size import check_prompt_chars
from .ratelimit import Admission
from .render import complete_rendered, render_by_choice
from .state import (
    CACHE,
    CHAOS,
    CONFIG,
    ENGINE,
    LATENCY,
    LIMITER,
    OFFLOAD,
    REQUEST_STATE,
    RequestState,
    validator,
)
from .streaming import OffLoop, send_stream

JSON_TYPE = "application/json"
OFF_LOOP_BODY_BYTES = 64 * 1024
"""Bodies larger than this are parsed and validated on the engine's threads (``offload``)."""
PIECEWISE_BYTES = 1 << 20
"""Answers larger than this are written in pieces of PIECE_BYTES (``_send_in_pieces``)."""
PIECE_BYTES = 256 * 1024
T = TypeVar("T")


async def completions(request: web.Request) -> web.StreamResponse:
    state = request[REQUEST_STATE]
    app, ctx = request.app, state.ctx
    checker = validator(app, state.route)
    chaos = app[CHAOS]
    ticket = chaos.ticket()
    body: JSON = None
    valid: dict[str, JSON] | None = None
    error: ApiError | None = None
    answer_key: AnswerKey | None = None
    large = False
    try:
        raw = await read_body(request, max_bytes=app[CONFIG].max_body_bytes,
                              invalid_status=checker.status,
                              read_timeout=app[CONFIG].read_timeout)
        if not state.faults and not chaos.enabled and LIMITER not in app:
            answer_key = app[CACHE].answer_key(checker.name, raw)
            answer = app[CACHE].answer(answer_key)
            if answer is not None:
                return await _answer(request, answer)
        large = len(raw) > OFF_LOOP_BODY_BYTES
        if large:
            body = await _off_loop(request, lambda stop: parse_json(raw, checker.status))
        else:
            body = parse_json(raw, checker.status)
        ctx.body = body if isinstance(body, dict) else None
        ctx.stream = isinstance(body, dict) and body.get("stream") is True
        if large:
            valid = await _off_loop(request, lambda stop: checker.validate(body))
        else:
            valid = checker.validate(body)
    except ApiError as raised:
        error = raised
    state.add_fault(chaos.pick(ticket, ctx, invalid=error is not None))
    verdict = state.faults.judge(Verdict(body, error), ctx)
    if verdict.error is not None:
        raise verdict.error
    if valid is None or verdict.body is not body:  # invalid, or a fault put another body
        valid = checker.validate(verdict.body)
    max_chars, checked = app[CONFIG].max_prompt_chars, valid
    if large:  # walks every prompt
        await _off_loop(request, lambda stop: check_prompt_chars(checked, max_chars, checker))
    else:
        check_prompt_chars(checked, max_chars, checker)
    ctx.body = valid
    params = state.faults.alter_body(dict(valid), ctx)
    options = WireOptions.from_body(params, profile=checker.profile)
    engine = app[ENGINE]
    identity = Identity.new(
        model=valid["model"],
        system_fingerprint=engine.fingerprint if checker.profile == "openai" else None,
    )
    try:
        if large:  # the wire conversion and the canonical JSON walk every prompt
            generation, key = await _off_loop(request, lambda stop: _prepared(
                request, params, checker.profile))
        else:
            generation, key = _prepared(request, params, checker.profile)
        if options.stream:
            return await _stream(request, state, generation, key, identity, options,
                                 large=large)
        return await _complete(request, state, generation, key, identity, options, large=large,
                               answer_key=answer_key if key is not None and not state.faults
                               else None)
    except InvalidRequestError as engine_error:
        raise checker.engine_error(engine_error) from None


def _prepared(request: web.Request, params: dict[str, JSON],
              profile: str) -> tuple[GenerationRequest, CacheKey | None]:
    """The engine's request for ``params``, and its result-cache key if the engine calls it
    deterministic."""
    generation = build_request(params, profile=profile)
    deterministic = request.app[ENGINE].deterministic(generation)
    return generation, request.app[CACHE].key(profile, params, deterministic=deterministic)


async def _answer(request: web.Request, answer: Answer) -> web.Response:
    """A kept answer with a fresh identity (the model and fingerprint are in its tail)."""
    identity = Identity.new(model="")
    delay = request.app[LATENCY].whole(answer.completion_tokens)
    if delay > 0:
        await asyncio.sleep(delay)
    prefix = identity_prefix(identity, profile=request[REQUEST_STATE].route.profile)
    return web.Response(body=prefix + answer.tail, headers={"Content-Type": JSON_TYPE})


async def _complete(request: web.Request, state: RequestState, generation: GenerationRequest,
                    key: CacheKey | None, identity: Identity,
                    options: WireOptions, *, large: bool = False,
                    answer_key: AnswerKey | None = None) -> web.StreamResponse:
    rendered = await _rendered(request, state, generation, key, identity, options, large=large)
    if rendered is not None:
        encoded, usage = rendered
    else:
        encoded, usage = await _render(request, state, identity, options, await _completion(
            request, state, generation, key, large=large))
    delay = request.app[LATENCY].whole(usage.completion_tokens)
    if delay > 0:
        await asyncio.sleep(delay)
    _charge(request, state.admission, usage.prompt_tokens + usage.completion_tokens)
    headers = state.faults.alter_headers({"Content-Type": JSON_TYPE}, state.ctx)
    if answer_key is not None:
        prefix = identity_prefix(identity, profile=state.route.profile)
        if encoded.startswith(prefix):
            request.app[CACHE].keep_answer(
                answer_key, Answer(encoded[len(prefix):], usage.completion_tokens))
    if state.faults and state.faults.has("writer", state.ctx):  # a fault bends the writes
        return await _send_in_pieces(request, encoded, headers,
                                     wrap=lambda write: state.faults.wrap_write(write, state.ctx))
    if len(encoded) > PIECEWISE_BYTES:
        return await _send_in_pieces(request, encoded, headers)
    return web.Response(body=encoded, headers=headers)


async def _rendered(request: web.Request, state: RequestState, generation: GenerationRequest,
                    key: CacheKey | None, identity: Identity, options: WireOptions, *,
                    large: bool) -> tuple[bytes, Usage] | None:
    """A large request that no fault touches, generated and rendered prompt by prompt on the
    engine's threads (``render.complete_rendered``); None for the usual path (small, faulted,
    or in the result cache)."""
    cache, engine, profile = request.app[CACHE], request.app[ENGINE], state.route.profile
    if state.faults or cache.has_completion(key):
        return None
    if not large and not sizing.off_loop(generation, engine):
        return None

    def job(stop: threading.Event) -> tuple[bytes, Usage, Completion | None]:
        return complete_rendered(engine, generation, stop, identity, profile=profile,
                                 suffix=options.suffix,
                                 keep_units=MAX_ENTRY_UNITS if key is not None else 0)

    encoded, usage, whole = await _off_loop(request, job)
    if whole is not None:
        cache.keep_completion(key, whole)
    return encoded, usage


async def _render(request: web.Request, state: RequestState, identity: Identity,
                  options: WireOptions, completion: Completion) -> tuple[bytes, Usage]:
    """``completion``'s body, through the ``payload`` faults; on a thread when it is large."""
    heavy = sizing.heavy_answer(completion)

    def render(stop: object = None) -> bytes:
        if heavy and not state.faults:
            return render_by_choice(completion, identity, profile=state.route.profile,
                                    suffix=options.suffix)
        body = completion_body(completion, identity, profile=state.route.profile,
                               suffix=options.suffix)
        altered = state.faults.alter_payload(body, state.ctx)
        encode = sse.encode_json_by_choice if heavy else sse.encode_json
        return encode(body if altered is None else altered)

    encoded = await _off_loop(request, render) if heavy else render()
    return encoded, completion.usage


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


async def _completion(request: web.Request, state: RequestState,
                      generation: GenerationRequest, key: CacheKey | None, *,
                      large: bool) -> Completion:
    cache, engine = request.app[CACHE], request.app[ENGINE]
    completion = cache.completion(key)
    if completion is None:
        if large or sizing.off_loop(generation, engine):
            completion = await _off_loop(
                request, lambda stop: generate.complete(engine, generation, stop))
        else:
            completion = engine.complete(generation)
        cache.keep_completion(key, completion)
    return completion


async def _off_loop(request: web.Request, job: Callable[[threading.Event], T]) -> T:
    """``job`` on the engine's threads, within what is left of the request's budget (all its
    jobs together: parsing, validation, generation, rendering; see ``offload``)."""
    state, loop = request[REQUEST_STATE], asyncio.get_running_loop()
    started = loop.time()
    try:
        return await request.app[OFFLOAD].run(request, job,
                                              budget=request.app[CONFIG].request_budget,
                                              spent=state.engine_seconds)
    finally:
        state.engine_seconds += loop.time() - started


async def _stream(request: web.Request, state: RequestState, generation: GenerationRequest,
                  key: CacheKey | None, identity: Identity,
                  options: WireOptions, *, large: bool = False) -> web.StreamResponse:
    cache, engine = request.app[CACHE], request.app[ENGINE]
    replay = cache.events(key)
    source: Iterator[Event]
    if replay is not None:
        source = events = iter(replay)
    else:  # engine.stream validates eagerly: it raises before any byte is sent
        large = large or sizing.off_loop(generation, engine)
        if large:  # tokenizing all prompts is the eager part
            source = await _off_loop(request, lambda stop: engine.stream(generation))
        else:
            source = engine.stream(generation)
        events = cache.recording(key, source)
    usage: list[int] = []
    latency = request.app[LATENCY]
    frames: Iterator[sse.Frame | bytes]
    plain = not state.faults and not latency.enabled
    if plain:  # nothing needs the chunks: straight to bytes
        frames = stream_frames(_tap_usage(events, usage), identity, profile=state.route.profile,
                               include_usage=options.include_usage, logprobs=options.logprobs,
                               suffix=options.suffix)
    else:
        chunks = stream_chunks(_tap_usage(events, usage), identity, profile=state.route.profile,
                               include_usage=options.include_usage, logprobs=options.logprobs,
                               suffix=options.suffix)
        frames = state.faults.alter_frames(
            sse.frames(state.faults.alter_chunks(chunks, state.ctx)), state.ctx)
    headers = state.faults.alter_headers(
        {"Content-Type": sse.CONTENT_TYPE, "Cache-Control": "no-cache",
         "X-Accel-Buffering": "no"},
        state.ctx,
    )
    response = await send_stream(request, frames, headers=headers, faults=state.faults,
                                 ctx=state.ctx, latency=latency,
                                 close=getattr(source, "close", _nothing),
                                 off_loop=_batches(request) if large else None)
    _charge(request, state.admission, sum(usage))
    return response


def _batches(request: web.Request) -> OffLoop:
    """How ``send_stream`` draws events on the engine's threads, within the request's budget."""

    async def run(job: Callable[[threading.Event], list[sse.Frame | bytes]],
                  ) -> list[sse.Frame | bytes]:
        return await _off_loop(request, job)

    return run


def _nothing() -> None:
    return None


def _tap_usage(events: Iterator[Event], usage: list[int]) -> Iterator[Event]:
    for event in events:
        if isinstance(event, UsageEvent):
            usage.append(event.usage.total_tokens)
        yield event


def _charge(request: web.Request, admission: Admission | None, tokens: int) -> None:
    limiter = request.app.get(LIMITER)
    if limiter is not None and admission is not None and tokens:
        limiter.charge(admission, tokens)
