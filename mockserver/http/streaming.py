"""Sending a stream: headers first, then each event as the engine produces it.

Spec: the ``text/event-stream`` response of the completions operations. Everything that can
fail with a 4xx has been checked before this module is reached (validation and the engine's
eager checks), so ``prepare()`` is only called for a stream that will be sent. After it, a
client that leaves ends the stream at once: the engine's generator is closed, so generation
stops. Unexpected errors after ``prepare()`` end the stream with an error event and
``[DONE]`` (bug class 13 in the research notes), never silently.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping

from aiohttp import web

from .. import sse
from ..errors import ApiError, server_error
from ..faults import AbortConnection, ActiveFaults, FaultContext, Write
from ..sse import Frame
from .engine_threads import check
from .latency import Latency, is_token_frame

log = logging.getLogger("mockserver")
OffLoop = Callable[[Callable[[threading.Event], list[Frame | bytes]]],
                   Awaitable[list[Frame | bytes]]]
"""``run(job)``: ``job(stop)`` on a worker thread, within the request's budget."""
YIELD_EVERY = 8
"""Without simulated latency, give other requests the event loop every this many events (one
socket write each): ~0.2-0.4 ms of generation per turn, so 256 concurrent streams go round
the loop in ~75 ms. 4 events per turn halved that round but spent ~7% more per token on
sends (256 sampled streams, bench_mock, 2026-12-03: ~29,900 against ~32,100 tokens/s)."""
BATCH_SECONDS = 0.002
BATCH_EVENTS = 64
"""A stream drawn on the engine's threads takes events for this long (or this many) per job:
each job is a round trip between the loop and a thread (~100 us here), and all its events
are ready at once, so they share one socket write."""


class _HeadersWithFirstWrite(web.StreamResponse):
    """A stream whose headers leave with its first events, in one send instead of two.

    aiohttp (3.12 and later) reads this class attribute in ``prepare()``, as its own
    :class:`web.Response` sets it; earlier versions send the headers at ``prepare()`` as
    before. The bytes on the wire are the same either way. Only for streams whose first
    events follow at once (drawn on the loop, no simulated latency, no fault).
    """

    _send_headers_immediately = False


async def send_stream(
    request: web.Request,
    frames: Iterator[Frame | bytes],
    *,
    headers: Mapping[str, str],
    faults: ActiveFaults,
    ctx: FaultContext,
    latency: Latency,
    close: Callable[[], None],
    off_loop: OffLoop | None = None,
) -> web.StreamResponse:
    """Write ``frames`` as they come; ``close`` stops the engine (always called).

    ``frames`` may be plain bytes (one event each) when no fault and no latency applies.
    ``off_loop``, if given, draws them on the engine's threads (a large request: echo scoring
    and long prompts make single events expensive), a batch at a time (``BATCH_SECONDS``),
    with the chunk and frame faults that bend them; latency and writer faults still act on the loop,
    event by event, as they do for a small request.

    A stream drawn on the loop sends its last events with the end of the body (one send, not
    two); one with neither latency nor faults also sends its headers with its first events.
    """
    prompt = off_loop is None and not latency.enabled
    kind = _HeadersWithFirstWrite if prompt and not faults else web.StreamResponse
    response = kind(status=200, headers=headers)
    # Writer faults count writes and bytes, so they get one write per event.
    coalesce = not faults.has("writer", ctx)
    write = faults.wrap_write(response.write, ctx)
    tail = b""
    try:
        await response.prepare(request)
        if off_loop is not None:
            await _pump_off_loop(frames, write, latency, off_loop, coalesce=coalesce)
        else:
            _, tail = await _pump(frames, write, latency, coalesce=coalesce, keep_tail=True)
    except ConnectionError:  # the client left (ClientConnectionResetError is one)
        return response
    except ApiError as error:  # the budget ran out, or the server is stopping
        log.info("a stream was stopped (%s): %s", request.path, error.message)
        await _end_with_error(response, error)
        return response
    except AbortConnection:
        if request.transport is not None:
            request.transport.close()
        return response
    except Exception:
        log.exception("a stream failed after its headers were sent (%s)", request.path)
        if response.prepared:
            await _end_with_error(response)
            return response
        raise
    finally:
        with contextlib.suppress(ValueError):  # still running on a thread: it sees its stop flag
            if hasattr(frames, "close"):
                frames.close()
            close()
    with contextlib.suppress(ConnectionError):  # the client may leave after the last event
        await response.write_eof(tail)
    return response


async def _pump(frames: Iterator[Frame | bytes], write: Write, latency: Latency, *,
                coalesce: bool, first: bool = True, keep_tail: bool = False,
                every: int = YIELD_EVERY) -> tuple[bool, bytes]:
    """Send each event as the engine produces it; returns whether the first token is still
    to come (so batches drawn off the loop continue where the last one ended) and, with
    ``keep_tail``, the last events unsent (the caller sends them with the end of the body).
    ``every``: how many events at most share a write (a batch drawn off the loop: all).

    With simulated latency, every token event is written right after its delay. Without
    it, events produced back to back (at most ``YIELD_EVERY``, a few hundred microseconds of
    generation) share one socket write, and the loop is handed to other requests in between:
    one send per token would cost more than generating the token.
    """
    pending: list[bytes] = []
    for count, frame in enumerate(frames, start=1):
        if isinstance(frame, bytes):  # a plain event: no latency, no writer fault
            pending.append(frame)
            if len(pending) >= every:
                await write(b"".join(pending))
                pending.clear()
                await asyncio.sleep(0)
            continue
        if latency.enabled and is_token_frame(frame):
            if pending:
                await write(b"".join(pending))
                pending.clear()
            await asyncio.sleep(latency.first_token() if first else latency.next_token())
            first = False
            await write(frame.data)
        elif not coalesce:
            await write(frame.data)
            if count % YIELD_EVERY == 0:
                await asyncio.sleep(0)
        else:
            pending.append(frame.data)
            if len(pending) >= every:
                await write(b"".join(pending))
                pending.clear()
                await asyncio.sleep(0)
    tail = b"".join(pending)
    if tail and not keep_tail:
        await write(tail)
        tail = b""
    return first, tail


async def _pump_off_loop(frames: Iterator[Frame | bytes], write: Write, latency: Latency,
                         off_loop: OffLoop, *, coalesce: bool) -> None:
    """Draw events a batch at a time on a worker thread (see ``BATCH_SECONDS``), and send
    each batch as :func:`_pump` sends events (the same delays and fault hooks), its ready
    events in one write."""
    first = True
    while True:
        batch = await off_loop(lambda stop: _take(frames, stop))
        if not batch:
            return
        first, _ = await _pump(iter(batch), write, latency, coalesce=coalesce, first=first,
                               every=len(batch))


def _take(frames: Iterator[Frame | bytes], stop: threading.Event) -> list[Frame | bytes]:
    batch: list[Frame | bytes] = []
    deadline = time.perf_counter() + BATCH_SECONDS
    while len(batch) < BATCH_EVENTS:
        check(stop)
        frame = next(frames, None)
        if frame is None:
            break
        batch.append(frame)
        if time.perf_counter() >= deadline:
            break
    return batch


async def _end_with_error(response: web.StreamResponse, error: ApiError | None = None) -> None:
    envelope = (error or server_error()).envelope()
    try:
        await response.write(sse.error_ending(envelope))
        await response.write_eof()
    except ConnectionError:
        pass
