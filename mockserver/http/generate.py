"""Stage two of ``POST /v1/completions``: the engine's answer, from the result cache or made.

Intake's :class:`~.intake.Plan` says how: a whole :class:`Completion` (kept, made on the loop
or on the engine's threads), a large unfaulted answer generated and rendered prompt by prompt
on the threads (:class:`Rendered`), or a stream's events (:class:`Source`). Work that grows
with the request runs on the threads, stoppable between prompts: ``Engine.complete_prompts``
hands the completion over prompt by prompt, and a request of 100,000 prompts stops when its
client leaves or its budget runs out (issue 13, part 3) instead of outliving both.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from aiohttp import web

from reference_engine import Engine
from reference_engine.request import GenerationRequest
from reference_engine.results import Completion, Event, Usage

from . import off_loop_thresholds
from .answer_bytes import complete_rendered
from .budgeted_jobs import off_loop
from .cache import MAX_ENTRY_UNITS
from .engine_threads import checked
from .intake import Plan
from .state import CACHE, ENGINE, REQUEST_STATE


@dataclass(frozen=True)
class Rendered:
    """An answer generated and rendered in one go: its bytes and usage."""

    encoded: bytes
    usage: Usage


@dataclass(frozen=True)
class Source:
    """A stream's events; ``close`` stops the engine; ``off_loop``: draw them on a thread."""

    events: Iterator[Event]
    close: Callable[[], None]
    off_loop: bool


def complete(engine: Engine, generation: GenerationRequest, stop: threading.Event) -> Completion:
    """``engine.complete(generation)``, raising ``Stopped`` between prompts when told."""
    return Completion.joined(checked(engine.complete_prompts(generation), stop))


async def whole(request: web.Request, plan: Plan) -> Completion | Rendered:
    """The non-streamed answer, as ``plan.how`` says."""
    cache, engine = request.app[CACHE], request.app[ENGINE]
    if plan.how == "rendered":
        wire = request[REQUEST_STATE].route.wire

        def job(stop: threading.Event) -> tuple[bytes, Usage, Completion | None]:
            return complete_rendered(engine, plan.generation, stop, plan.identity,
                                     wire=wire, suffix=plan.options.suffix,
                                     keep_units=MAX_ENTRY_UNITS if plan.key is not None else 0)

        encoded, usage, kept = await off_loop(request, job)
        if kept is not None:
            cache.keep_completion(plan.key, kept)
        return Rendered(encoded, usage)
    completion = cache.completion(plan.key)
    if completion is None:
        generation = plan.generation
        if plan.large or off_loop_thresholds.off_loop(generation, engine):
            completion = await off_loop(
                request, lambda stop: complete(engine, generation, stop))
        else:
            completion = engine.complete(generation)
        cache.keep_completion(plan.key, completion)
    return completion


async def events(request: web.Request, plan: Plan) -> Source:
    """The stream's events: kept ones replayed, or the engine's (recorded for the cache).

    ``engine.stream`` validates eagerly: it raises before any byte is sent.
    """
    cache, engine = request.app[CACHE], request.app[ENGINE]
    replay = cache.events(plan.key)
    if replay is not None:
        return Source(iter(replay), _nothing, plan.large)
    generation = plan.generation
    large = plan.large or off_loop_thresholds.off_loop(generation, engine)
    if large:  # tokenizing all prompts is the eager part
        source = await off_loop(request, lambda stop: engine.stream(generation))
    else:
        source = engine.stream(generation)
    return Source(cache.recording(plan.key, source), getattr(source, "close", _nothing), large)


def _nothing() -> None:
    return None
