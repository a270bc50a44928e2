"""Recorded exchanges as the HTML report shows them: one ``<details>`` each, the request, the
status and headers as received, and the body or the SSE events with their arrival times.

What a page shows stays bounded whatever a server sent: a body is cut to :data:`BODY_LIMIT`
bytes, a stream to its first :data:`EVENT_LIMIT` events, an event's data to
:data:`DATA_LIMIT` characters, each cut with a note saying how much is left out (the JSON
report keeps more, :mod:`conformance.reporting.json_report`).
"""

from __future__ import annotations

from html import escape

from conformance.transport import Exchange

BODY_LIMIT = 4 << 10
"""Body bytes shown of one request or response."""
EVENT_LIMIT = 60
"""SSE events listed of one stream."""
DATA_LIMIT = 600
"""Characters shown of one event's data."""
HEADER_LIMIT = 40
"""Headers listed of one request or response."""
VALUE_LIMIT = 400
"""Characters shown of one header's value."""


def cut(text: str, limit: int) -> str:
    """``text``, or its first ``limit`` characters and how many more there were."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]} ... ({len(text) - limit:,} more characters)"


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.1f} ms"


def body_html(data: bytes, *, received: int | None = None, truncated: bool = False) -> str:
    """``data`` as text in a ``<pre>``, cut to :data:`BODY_LIMIT` bytes with a note."""
    if not data and not received:
        return '<p class="note">(empty body)</p>'
    shown = data[:BODY_LIMIT].decode("utf-8", "backslashreplace")
    total = max(received or 0, len(data))
    note = ""
    if total > BODY_LIMIT:
        note = (f'<p class="note">first {BODY_LIMIT:,} of {total:,} bytes shown; the JSON '
                "report keeps more</p>")
    elif truncated:
        note = '<p class="note">the harness kept only the start of this body</p>'
    return f"<pre>{escape(shown)}</pre>{note}"


def headers_html(headers: tuple[tuple[str, str], ...]) -> str:
    """Headers in the order received, one a line, cut to :data:`HEADER_LIMIT`."""
    if not headers:
        return '<p class="note">(no headers recorded)</p>'
    lines = "\n".join(f"{cut(name, VALUE_LIMIT)}: {cut(value, VALUE_LIMIT)}"
                      for name, value in headers[:HEADER_LIMIT])
    more = len(headers) - HEADER_LIMIT
    note = f'<p class="note">{more} more headers not shown</p>' if more > 0 else ""
    return f"<pre>{escape(lines)}</pre>{note}"


def events_html(exchange: Exchange) -> str:
    """The stream's events as a table: number, arrival time (when the blank line that
    dispatched it arrived), type, and data; then what the parser observed."""
    events = exchange.events
    if not events:
        table = '<p class="note">no events dispatched</p>'
    else:
        typed = any(event.event for event in events[:EVENT_LIMIT])
        rows = []
        for number, event in enumerate(events[:EVENT_LIMIT], 1):
            kind = f"<td>{escape(cut(event.event or '', 80))}</td>" if typed else ""
            rows.append(f"<tr><td class=n>{number}</td><td class=n>"
                        f"{_ms(event.dispatched_at)}</td>{kind}"
                        f"<td><code>{escape(cut(event.data, DATA_LIMIT))}</code></td></tr>")
        more = len(events) - EVENT_LIMIT
        note = (f'<p class="note">{more} more events not shown (see the JSON report)</p>'
                if more > 0 else "")
        kind = "<th>event</th>" if typed else ""
        table = (f"<table class=events><tr><th>#</th><th>at</th>{kind}<th>data</th>"
                 f"</tr>{''.join(rows)}</table>{note}")
    observed = "".join(f"<li><code>{escape(o.code)}</code> at byte {o.offset}: "
                       f"{escape(cut(o.message, DATA_LIMIT))}</li>"
                       for o in exchange.observations[:20])
    if observed:
        more = len(exchange.observations) - 20
        left = f'<p class="note">{more} more not shown</p>' if more > 0 else ""
        table += f"<p>The SSE parser observed:</p><ul>{observed}</ul>{left}"
    return table


def summary_line(label: str, exchange: Exchange) -> str:
    """``greedy/s: POST /v1/completions -> 200, 14 events, 35.2 ms``, escaped."""
    request = exchange.request
    path = request.url.split("://", 1)[-1].partition("/")[2]
    status = str(exchange.status) if exchange.status is not None else "no answer"
    parts = [f"{len(exchange.events)} events" if exchange.is_sse
             else f"{exchange.bytes_received} B"]
    if timed(exchange):
        parts.append(_ms(exchange.timings.ended_at))
    return escape(f"{label}: {request.method} /{path} -> {status}, {', '.join(parts)}")


def timed(exchange: Exchange) -> bool:
    """Whether the recording kept times (a fuzz finding's keeps only the request and the
    start of the answer)."""
    return exchange.timings.started_wall > 0


def _times(exchange: Exchange) -> str:
    timings = exchange.timings
    if not timed(exchange):
        return "times not recorded; "
    return (f"headers at {_ms(timings.headers_at)}, first byte at {_ms(timings.first_byte_at)}, "
            f"last at {_ms(timings.ended_at)}; ")


def exchange_html(label: str, exchange: Exchange, *, anchor: str | None = None) -> str:
    """One exchange as an openable ``<details>`` (closed), with ``anchor`` as its id."""
    request = exchange.request
    ident = f' id="{escape(anchor)}"' if anchor else ""
    version = f"HTTP/{exchange.http_version}" if exchange.http_version else "HTTP"
    status = (f"{version} {exchange.status} {exchange.reason or ''}"
              if exchange.status is not None else "no status line")
    ended = f"ended: {exchange.termination}" + (f" ({exchange.error})" if exchange.error else "")
    response = (events_html(exchange) if exchange.is_sse else
                body_html(exchange.body, received=exchange.bytes_received,
                          truncated=exchange.body_truncated))
    return (
        f'<details class="exchange"{ident}><summary>{summary_line(label, exchange)}</summary>'
        f"<h4>Request</h4><pre>{escape(request.method)} {escape(request.url)}</pre>"
        f"{headers_html(request.headers)}{body_html(request.body)}"
        f"<h4>Response: {escape(status.strip())}</h4>"
        f'<p class="note">{_times(exchange)}{escape(ended)}</p>'
        f"{headers_html(exchange.headers)}{response}</details>"
    )
