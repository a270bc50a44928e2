"""Whatever a server sends, a report stays a few MB (issue 39): a long body keeps its head and
tail with ``body_cut`` saying what is missing, a stream only the events within them, and a
well-behaved server's exchanges are kept whole so a replay serves them back byte for byte."""

from __future__ import annotations

import json

from harness_support import chunk, frames, sse_exchange

from conformance.reporting.json_report import (
    MAX_EVENTS,
    SMALL_WINDOW,
    WINDOW,
    ReportBudget,
    exchange_json,
)
from conformance.transport import Termination

FLOOD = frames(*(chunk(0, "x") for _ in range(20_000)), done=False)
"""A stream cut by the harness after 20,000 small events (~3 MB), never [DONE]."""


def test_a_short_stream_is_kept_whole() -> None:
    raw = frames(chunk(0, "Hello"), chunk(0, "", "stop"))
    out = exchange_json(sse_exchange(raw))
    assert "body_cut" not in out and "events_omitted" not in out
    assert out["body"] == raw.decode()
    assert [e["data"] for e in out["events"]][-1] == "[DONE]"


def test_a_long_stream_keeps_its_head_and_tail_and_says_what_is_missing() -> None:
    exchange = sse_exchange(FLOOD, termination=Termination.EVENT_COUNT_LIMIT)
    out = exchange_json(exchange)
    cut = out["body_cut"]
    assert len(out["body"]) == cut["head_bytes"] and len(out["body_tail"]) == cut["tail_bytes"]
    assert cut["head_bytes"] + cut["tail_bytes"] == WINDOW
    assert cut["head_bytes"] + cut["tail_bytes"] + cut["omitted_bytes"] == len(FLOOD)
    assert FLOOD.decode().startswith(out["body"]) and FLOOD.decode().endswith(out["body_tail"])
    assert len(out["events"]) == MAX_EVENTS
    assert out["events_omitted"] == len(exchange.events) - MAX_EVENTS
    assert f"[{cut['omitted_bytes']} bytes cut]" in out["sse_lines"]


def test_a_report_of_cut_exchanges_stays_under_five_megabytes() -> None:
    """Seventy exchanges of a flooding server through one report's budget: the first keep a
    full window, the rest a small one once the budget is spent."""
    budget = ReportBudget()
    exchange = sse_exchange(FLOOD, termination=Termination.EVENT_COUNT_LIMIT)
    outs = [exchange_json(exchange, budget) for _ in range(70)]
    size = len(json.dumps(outs))
    assert size < 5 << 20, size
    assert outs[-1]["body_cut"]["head_bytes"] + outs[-1]["body_cut"]["tail_bytes"] == (
        SMALL_WINDOW)
