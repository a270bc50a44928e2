"""How a fuzz run's valid completion requests were answered: whether the run can judge at all.

``conformance run`` ends with one line and exit status 2, no verdicts, when none of its
completion requests got a 2xx, or when the server stopped answering before it answered any
(:func:`conformance.target.diagnosis.refused_run`). A fuzz run ends the same way: a gateway whose
upstream is down, answering 500 to every request, would otherwise be a report of schemathesis
findings on one cause, and a server that stopped answering a PASS of the few rules that read
the model listing. :class:`Statuses` counts the answers as the run's checks read them (every
response is read once) and the requests that got no whole answer (from the guard's network
failures); :func:`unjudged` is the one line.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from conformance.client import STOPPED_ANSWERING
from conformance.target.diagnosis import Tally, no_success, stopped_line, where_of
from conformance.target.options import TargetOptions
from conformance.transport import Exchange

from .guard import NetworkFailure


class Statuses:
    """How many valid completion requests got each status (None: no status line), with where
    the first of each went and what the server said; safe across schemathesis' workers."""

    def __init__(self) -> None:
        self._counts: dict[int | None, tuple[int, str | None]] = {}
        self._lock = threading.Lock()

    def add(self, status: int | None, exchange: Exchange | None = None) -> None:
        """Count one answer; ``exchange`` gives a first non-2xx answer's words (a 2xx's are
        never needed, and a 16 MiB stream is not kept for them)."""
        with self._lock:
            count, where = self._counts.get(status, (0, None))
            if count == 0 and not _success(status):
                where = where_of(exchange)
            self._counts[status] = (count + 1, where)

    def add_failures(self, failures: Iterable[NetworkFailure]) -> None:
        """Count the requests that got no whole answer (:class:`NetworkFailure`): the status
        line that came before the answer broke off, or None."""
        for failure in failures:
            self.add(failure.status)

    def tally(self) -> tuple[tuple[int | None, int, str | None], ...]:
        with self._lock:
            return tuple((status, count, where)
                         for status, (count, where) in self._counts.items())


def _success(status: int | None) -> bool:
    return status is not None and 200 <= status < 300


def unjudged(tally: Tally, stop_reason: str, options: TargetOptions) -> str | None:
    """The one line of a fuzz run that could judge nothing, as ``conformance run`` has it:
    the server stopped answering before any valid completion request got a status line, or
    none of them got a 2xx; None when the run can be judged (or sent no valid completion
    request: a ``--mode negative`` run's invalid requests are judged as they were answered).
    The line does not count the retries of a 429 / 503: the guard gives up at once on a
    ``Retry-After`` beyond its wait."""
    if tally and stop_reason.startswith(STOPPED_ANSWERING) and all(
            status is None for status, _, _ in tally):
        return stopped_line(stop_reason, options)
    if tally and not any(_success(status) for status, _, _ in tally):
        return no_success(tally, options, None)
    return None
