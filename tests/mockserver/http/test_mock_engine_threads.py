"""The engine's thread pool: when a job asks for the C heap to be trimmed.

A trim (a full collection, then ``malloc_trim``) follows a job that ran long on its own, at
most one at a time: jobs that only waited (in the queue, or for the GIL a trim held) are no
reason for another.
"""

from __future__ import annotations

import asyncio
import threading
import time
from types import SimpleNamespace
from typing import Any

import pytest

from mockserver.http import engine_threads
from mockserver.http.engine_threads import Offload

HEAVY = 0.05


@pytest.fixture(autouse=True)
def quick_trims(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_threads, "HEAVY_SECONDS", HEAVY)
    monkeypatch.setattr(engine_threads, "TRIM_DELAY", 0.15)


class Pool(Offload):
    """An :class:`Offload` that notes when it trims (other apps in the process trim too)."""

    def __init__(self, threads: int) -> None:
        super().__init__(threads)
        self.trims: list[float] = []

    def _trim(self) -> None:
        self.trims.append(time.monotonic())
        super()._trim()


def busy(seconds: float) -> Any:
    """A job that spends ``seconds`` of its thread's CPU."""

    def job(stop: threading.Event) -> None:
        started = time.thread_time()
        while time.thread_time() - started < seconds:
            pass

    return job


REQUEST: Any = SimpleNamespace(transport=SimpleNamespace(is_closing=lambda: False))


def trims_after(threads: int, *batches: list[Any]) -> int:
    """Run each batch of jobs at once, a trim's delay and more apart; count the trims."""

    async def run() -> int:
        pool = Pool(threads)
        for jobs in batches:
            await asyncio.gather(*(pool.run(REQUEST, job, budget=30.0) for job in jobs))
            await asyncio.sleep(0.4)  # the trim asked for, if any, runs meanwhile
        pool.close()
        return len(pool.trims)

    return asyncio.run(run())


def test_jobs_that_only_waited_in_the_queue_ask_for_no_trim() -> None:
    # One thread: each quick job waits behind the slow one for longer than HEAVY.
    assert trims_after(1, [busy(2 * HEAVY)] + [busy(0.0)] * 20) == 1


def test_quick_jobs_ask_for_no_trim() -> None:
    assert trims_after(1, [busy(0.0)] * 20) == 0


def test_heavy_jobs_ending_together_ask_for_one_trim() -> None:
    assert trims_after(2, [busy(2 * HEAVY)] * 2) == 1


def test_a_heavy_job_after_a_trim_asks_for_another() -> None:
    assert trims_after(1, [busy(2 * HEAVY)], [busy(2 * HEAVY)]) == 2
