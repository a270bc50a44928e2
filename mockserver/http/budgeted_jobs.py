"""A request's jobs on the engine's threads, all within the one budget of the request.

Every stage of the completions handler may hand work to the threads (``engine_threads``): intake
parses and validates a large body there, generate runs the engine, respond renders a long
answer and draws a large stream. Their times add up against ``--request-budget``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TypeVar

from aiohttp import web

from ..sse import Frame
from .state import CONFIG, OFFLOAD, REQUEST_STATE
from .streaming import OffLoop

T = TypeVar("T")


async def off_loop(request: web.Request, job: Callable[[threading.Event], T]) -> T:
    """``job`` on the engine's threads, within what is left of the request's budget."""
    state, loop = request[REQUEST_STATE], asyncio.get_running_loop()
    started = loop.time()
    try:
        return await request.app[OFFLOAD].run(request, job,
                                              budget=request.app[CONFIG].request_budget,
                                              spent=state.engine_seconds)
    finally:
        state.engine_seconds += loop.time() - started


async def maybe_off_loop(request: web.Request, large: bool, job: Callable[[], T]) -> T:
    """``job()`` on the engine's threads if ``large``, else here on the loop."""
    if large:
        return await off_loop(request, lambda stop: job())
    return job()


def batches(request: web.Request) -> OffLoop:
    """How ``send_stream`` draws events on the engine's threads, within the request's budget."""

    async def run(job: Callable[[threading.Event], list[Frame | bytes]],
                  ) -> list[Frame | bytes]:
        return await off_loop(request, job)

    return run
