"""Stage one of ``POST /v1/completions``: read, validate, fault, and decide how to answer.

Order: body, validation (schema, cross-field rules, model), ``validation`` faults, ``body``
faults, the prompt-size bound, wire conversion and the engine's request-wide checks -- all
before a byte of the answer is sent. What comes out is a :class:`Plan`: the engine's request,
its result-cache key (the engine says whether it is deterministic) and the one decision of
how the answer is produced (:data:`How`), which the later stages follow.

A repeat of a deterministic non-streamed request that nothing can bend (no fault, no chaos,
no rate limit) is answered from the result cache's rendered answers, keyed by its exact body
bytes: intake then returns that :class:`Answer` after only the media type and size checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from aiohttp import web

from reference_engine.errors import InvalidRequestError
from reference_engine.request import GenerationRequest
from spec import JSON

from ..errors import ApiError
from ..faults import Verdict
from ..wire import Identity, Wire, WireOptions, build_request
from . import off_loop_thresholds
from .body import parse_json, read_body
from .budgeted_jobs import maybe_off_loop
from .cache import Answer, AnswerKey, CacheKey
from .prompt_size import check_prompt_chars
from .state import CACHE, CHAOS, CONFIG, ENGINE, LIMITER, REQUEST_STATE, validator

OFF_LOOP_BODY_BYTES = 64 * 1024
"""Bodies larger than this are parsed and validated on the engine's threads (``engine_threads``)."""
How = Literal["stream", "rendered", "completion"]
"""``stream``: events as they are generated. ``rendered``: a large request no fault touches,
generated and rendered prompt by prompt on the engine's threads. ``completion``: the whole
:class:`Completion` (from the result cache or the engine), then rendered through the faults."""


@dataclass(frozen=True)
class Plan:
    """What intake settled for a request that is to be generated."""

    how: How
    generation: GenerationRequest
    key: CacheKey | None
    """The result-cache key; None: not deterministic (or the cache is off)."""
    identity: Identity
    options: WireOptions
    large: bool
    """The body was large: its work (conversion, generation) runs on the engine's threads."""
    answer_key: AnswerKey | None = None
    """Where the rendered answer is kept for a repeat of the same body bytes, if it may be."""


async def take(request: web.Request) -> Answer | Plan:
    """The request read and judged; raises :class:`ApiError` for any 4xx."""
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
                return answer
        large = len(raw) > OFF_LOOP_BODY_BYTES
        body = await maybe_off_loop(request, large, lambda: parse_json(raw, checker.status))
        ctx.body = body if isinstance(body, dict) else None
        ctx.stream = isinstance(body, dict) and body.get("stream") is True
        parsed = body
        valid = await maybe_off_loop(request, large, lambda: checker.validate(parsed))
    except ApiError as raised:
        error = raised
    state.add_fault(chaos.pick(ticket, ctx, invalid=error is not None))
    verdict = state.faults.judge(Verdict(body, error), ctx)
    if verdict.error is not None:
        raise verdict.error
    if valid is None or verdict.body is not body:  # invalid, or a fault put another body
        valid = checker.validate(verdict.body)
    max_chars, checked = app[CONFIG].max_prompt_chars, valid
    await maybe_off_loop(request, large,  # walks every prompt
                         lambda: check_prompt_chars(checked, max_chars, checker))
    ctx.body = valid
    params = state.faults.alter_body(dict(valid), ctx)
    options = WireOptions.from_body(params, wire=checker.wire)
    engine = app[ENGINE]
    identity = Identity.new(
        model=valid["model"],
        system_fingerprint=engine.fingerprint if checker.contract.fingerprint else None,
    )
    try:  # the wire conversion and the canonical JSON walk every prompt
        generation, key = await maybe_off_loop(
            request, large, lambda: _converted(request, params, checker.wire))
    except InvalidRequestError as engine_error:
        raise checker.engine_error(engine_error) from None
    if options.stream:
        how: How = "stream"
    elif (not state.faults and not app[CACHE].has_completion(key)
          and (large or off_loop_thresholds.off_loop(generation, engine))):
        how = "rendered"
    else:
        how = "completion"
    return Plan(how, generation, key, identity, options, large,
                answer_key=answer_key if key is not None and not state.faults else None)


def _converted(request: web.Request, params: dict[str, JSON],
               wire: Wire) -> tuple[GenerationRequest, CacheKey | None]:
    """The engine's request for ``params``, and its result-cache key if the engine calls it
    deterministic."""
    generation = build_request(params, wire=wire)
    deterministic = request.app[ENGINE].deterministic(generation)
    return generation, request.app[CACHE].key(wire, params, deterministic=deterministic)
