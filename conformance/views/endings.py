"""Why an exchange cannot be read to its end: the server cut it off, the harness stopped
reading at one of its limits, or a stream's framing broke. Each reason names the rule that
judges the defect, so a rule built on a whole exchange SKIPs pointing there
(:class:`~conformance.run.check_context.CheckContext` raises them as NotApplicable).
"""

from __future__ import annotations

from conformance.sse import codes
from conformance.transport import Exchange, Termination

from .stream import StreamView

BROKEN_FRAMING = frozenset(
    {codes.INVALID_UTF8, codes.UNTERMINATED_EVENT, codes.LINE_TOO_LONG, codes.EVENT_TOO_LARGE}
)
SERVER_LIMITS = frozenset(
    {
        Termination.IDLE_TIMEOUT,
        Termination.TOTAL_TIME_LIMIT,
        Termination.TOTAL_BYTES_LIMIT,
        Termination.LINE_TOO_LONG,
        Termination.EVENT_TOO_LARGE,
        Termination.EVENT_COUNT_LIMIT,
    }
)
"""The limits a server reaches by what it sends (too much, too large, too slowly); SSE-009 fails
a stream that reaches one. :attr:`Termination.RUN_MEMORY_LIMIT` is not one: it is the run's
budget, spent by every exchange together."""
TIME_LIMITS = frozenset({Termination.IDLE_TIMEOUT, Termination.TOTAL_TIME_LIMIT})
"""The server limits ``--timeout`` sets."""


def cut_off(exchange: Exchange) -> bool:
    """Whether the server's side broke a connection the harness had made before a whole
    non-streamed answer came: before the status (a reset, after the one retry a reused
    connection gets) or after it, mid-body. ERRORS-008's failure; a stream cut short is
    SSE-008's. A harness limit (time, size) is not the server cutting it off, nor is a
    connection that could not be made."""
    return not exchange.is_sse and exchange.termination is Termination.CONNECTION_ERROR


def cut_short(exchange: Exchange) -> str | None:
    """Why the harness stopped reading ``exchange`` at one of its limits, naming what judges
    that; None when the server ended it (normally or not)."""
    termination = exchange.termination
    if termination is Termination.RUN_MEMORY_LIMIT:
        return ("the harness stopped reading it when the run's memory budget was spent "
                "(raise --max-run-memory to judge it)")
    if termination not in SERVER_LIMITS:
        return None
    if exchange.is_sse:
        return (f"the stream was cut at a limit of the harness ({termination}: "
                f"{exchange.error}): judged by SSE-009")
    hint = "; raise --timeout to judge it" if termination in TIME_LIMITS else ""
    return (f"the body was cut at a limit of the harness ({termination}: {exchange.error}): "
            f"no rule judges the size or pace of a non-streamed body{hint}")


def unended(exchange: Exchange) -> str | None:
    """Why a stream was not seen to its end, naming the rule that judges it; None when the
    server ended it normally."""
    if exchange.termination is Termination.EOF:
        return None
    if exchange.termination is Termination.CONNECTION_ERROR:
        return f"the connection broke mid-stream: {exchange.error} (judged by SSE-008)"
    return cut_short(exchange) or f"the stream did not end normally ({exchange.termination})"


def unfinished(exchange: Exchange) -> str | None:
    """Why a 200 answer to a non-streamed request is not a whole body to read, naming the rule
    that judges it; None when it is whole."""
    if exchange.is_sse:
        return ("the non-streamed request was answered with an event stream (judged by "
                "CONTENT-TYPE-002)")
    if cut_off(exchange):
        return (f"it was cut off after HTTP {exchange.status}: {exchange.error} (judged by "
                "ERRORS-008)")
    return cut_short(exchange)


def unsound(view: StreamView) -> str | None:
    """Why a stream cannot be read as a sequence of chunks, or None when it can."""
    return unended(view.exchange) or unreadable(view)


def unreadable(view: StreamView) -> str | None:
    """Why the events of a stream, however it ended, cannot be read as chunks (broken
    framing, a payload that is not a JSON object, an error event), or None when they can."""
    exchange = view.exchange
    broken = sorted(code for code in exchange.observation_counts if code in BROKEN_FRAMING)
    if broken:
        return f"the stream's framing is broken ({', '.join(broken)}): judged by SSE rules"
    if view.invalid:
        return (f"{len(view.invalid)} event(s) do not carry a JSON object (judged by SSE-003 / "
                "SSE-004)")
    if view.errors:
        return "the stream carried an error event"
    return None
