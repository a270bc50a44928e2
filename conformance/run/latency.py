"""Latency of the streams a run or a fuzz run read: time to first token and inter-token gaps.

Both commands measure the same thing the same way: the arrival (dispatch) time of each chunk
event of a stream that answered 200 and parsed soundly, counted from when its request began.
The first chunk's time is the stream's time to first token; the gaps between consecutive
chunks are its inter-token latencies. A fuzz run reads thousands of streams, so what a
:class:`Latency` keeps is bounded (:data:`MAX_GAPS`).
"""

from __future__ import annotations

import itertools
import threading

from conformance.transport import Exchange
from conformance.views import StreamView
from conformance.views.endings import unsound

MAX_GAPS = 100_000
"""Inter-token gaps kept (and as many streams' first tokens): the charts need no more."""


def chunk_times(exchange: Exchange, view: StreamView | None = None) -> tuple[float, ...]:
    """When each chunk of ``exchange``'s stream arrived; empty unless it is a 200 stream that
    parsed soundly and has chunks (an error or a broken stream has no latency to chart)."""
    if not exchange.is_sse or exchange.status != 200:
        return ()
    view = view or StreamView(exchange)
    if unsound(view) is not None or not view.chunks:
        return ()
    return tuple(chunk.event.dispatched_at for chunk in view.chunks)


class Latency:
    """Times to first token and inter-token gaps, gathered stream by stream (thread-safe)."""

    def __init__(self) -> None:
        self.ttft: list[float] = []
        self.gaps: list[float] = []
        self._lock = threading.Lock()

    def add(self, times: tuple[float, ...]) -> None:
        """Count one stream's chunk times (:func:`chunk_times`); nothing for an empty one."""
        if not times:
            return
        with self._lock:
            if len(self.ttft) < MAX_GAPS:
                self.ttft.append(times[0])
            room = MAX_GAPS - len(self.gaps)
            if room > 0:
                self.gaps.extend(itertools.islice(
                    (b - a for a, b in itertools.pairwise(times)), room))
