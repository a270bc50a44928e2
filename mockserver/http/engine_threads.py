"""Work off the event loop: a small thread pool, a stop flag per job, a time budget per request.

The event loop must never do work that grows with the request (issue 13: one 1,000,000-character
prompt froze ``/health`` for seconds). Large requests therefore parse, validate, tokenize,
generate and render on these threads, while the loop keeps serving everyone else. A thread
cannot be killed, so every job receives a :class:`threading.Event` it checks between pieces of
work (prompts, stream events); :meth:`Offload.run` sets it when

- the client has gone (its connection closed): the answer would go nowhere;
- the request's budget (``--request-budget``) is spent: the caller gets 503;
- the server stops (SIGTERM): :meth:`Offload.close`, so shutdown never waits for a job.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar, cast

from aiohttp import web

from procutil import heap

from ..errors import ApiError

T = TypeVar("T")
THREADS = 2
"""Threads for engine work (the engine is pure Python: more threads add no throughput)."""
POLL_SECONDS = 0.05
"""How often a waiting request looks whether its client is still there."""
HEAVY_SECONDS = 0.1
TRIM_DELAY = 0.5
"""After a job that ran longer than HEAVY_SECONDS, once its answer has likely been sent, the C
heap is trimmed (glibc ``malloc_trim``): the millions of small objects of an echo-scoring
request leave freed memory in per-thread malloc arenas that is otherwise never returned to
the OS. What counts is the job's own CPU time on its thread (not its wait in the queue or
for the GIL), and one trim at a time is pending: a trim's full collection holds the GIL as
long as the live heap takes to walk (long, with a full result cache), so every job queued
behind it looked heavy and asked for another, and concurrent streams drawn off the loop (a
job per batch of events) ended up spending almost all their time collecting garbage."""


def _release_memory() -> None:
    """Collect what the job left in cycles (GC was off while it ran), then trim the C heap."""
    gc.collect()
    heap.trim()


class Stopped(Exception):
    """Raised inside a job whose stop flag was set; the job's result is not wanted."""


class Offload:
    """The engine's thread pool for one app; ``close()`` stops every job."""

    def __init__(self, threads: int = THREADS) -> None:
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="mock-engine")
        self._stops: set[threading.Event] = set()
        self._closed = False
        self._running = 0
        self._lock = threading.Lock()
        self._heavy = False
        """A job ran longer than HEAVY_SECONDS since the last trim was asked for."""
        self._trim_pending = False

    @property
    def running(self) -> int:
        """Jobs executing on a thread right now (a stopped job counts until it returns)."""
        return self._running

    def _call(self, job: Callable[[threading.Event], T], stop: threading.Event) -> T:
        """Run ``job`` with cyclic GC off: a job allocates up to millions of small acyclic
        objects, and each gen-2 pass over them held the GIL (so the loop) for 20-70 ms. What
        cycles pile up meanwhile are collected after every long job (``_release_memory``)."""
        with self._lock:
            self._running += 1
            if self._running == 1:
                gc.disable()
        started = time.thread_time()  # this thread's CPU: neither queueing nor GIL waits
        try:
            return job(stop)
        finally:
            if time.thread_time() - started > HEAVY_SECONDS:
                self._heavy = True
            with self._lock:
                self._running -= 1
                if self._running == 0:
                    gc.enable()

    async def run(self, request: web.Request, job: Callable[[threading.Event], T], *,
                  budget: float, spent: float = 0.0) -> T:
        """``job(stop)`` on a worker thread; stopped when the client goes or the request's
        ``budget`` (of which earlier jobs have ``spent`` some) runs out.

        Raises ``ConnectionError`` when the client left (nothing is answered) and the 503
        :class:`ApiError` when the budget is spent.
        """
        loop = asyncio.get_running_loop()
        if self._closed:
            raise shutting_down()
        stop = threading.Event()
        self._stops.add(stop)
        future = loop.run_in_executor(self._pool, self._call, job, stop)
        deadline = loop.time() + budget - spent
        try:
            while True:
                left = deadline - loop.time()
                done, _ = await asyncio.wait({future}, timeout=max(0.0, min(POLL_SECONDS, left)))
                if done:
                    return _result(future, stopping=self._closed)
                if client_gone(request):
                    raise ConnectionError("the client closed its connection")
                if loop.time() >= deadline:
                    raise over_budget(budget)
        finally:
            stop.set()
            self._stops.discard(stop)
            if not future.done():  # nobody will read its result; keep its error unlogged
                future.add_done_callback(_swallow)
                future.add_done_callback(lambda _: self._ask_for_trim(loop))
            else:
                self._ask_for_trim(loop)

    def _ask_for_trim(self, loop: asyncio.AbstractEventLoop) -> None:
        """Trim in TRIM_DELAY if a job was heavy since the last trim and none is pending."""
        if self._heavy and not self._trim_pending and not self._closed:
            self._heavy, self._trim_pending = False, True
            loop.call_later(TRIM_DELAY, self._trim)

    def _trim(self) -> None:
        self._trim_pending = False
        if not self._closed:
            self._pool.submit(_release_memory)

    def close(self) -> None:
        """Stop every job and the pool (without waiting: the jobs notice their flags)."""
        self._closed = True
        for stop in list(self._stops):
            stop.set()
        self._pool.shutdown(wait=False, cancel_futures=True)


def client_gone(request: web.Request) -> bool:
    """Whether the request's connection has closed."""
    transport = request.transport
    return transport is None or transport.is_closing()


def over_budget(budget: float) -> ApiError:
    return ApiError(
        503,
        f"The request needed more than its budget of {budget:g} s of engine time and was "
        "stopped; send fewer or shorter prompts, or start the mock with a larger "
        "--request-budget.",
        type="server_error",
        code="request_budget_exceeded",
        headers={"Retry-After": "1"},
    )


def check(stop: threading.Event) -> None:
    """Inside a job: raise :class:`Stopped` once the stop flag is set."""
    if stop.is_set():
        raise Stopped


def checked(items: Iterable[T], stop: threading.Event) -> Iterator[T]:
    """``items``, checking the stop flag before each is drawn (``Engine.complete_prompts``
    generates a prompt when its part is drawn: the flag is looked at between prompts)."""
    iterator = iter(items)
    while True:
        check(stop)
        item = next(iterator, _END)
        if item is _END:
            return
        yield cast(T, item)


_END = object()


def _result(future: asyncio.Future[T], *, stopping: bool) -> T:
    try:
        return future.result()
    except Stopped:
        if not stopping:
            raise
        raise shutting_down() from None


def shutting_down() -> ApiError:
    return ApiError(503, "The mock server is shutting down; retry against another instance.",
                    type="server_error", code="server_shutting_down", headers={"Retry-After": "1"})


def _swallow(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()
