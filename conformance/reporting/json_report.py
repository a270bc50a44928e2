"""The JSON report: the whole result model, every exchange with its raw SSE lines.

Its shape is a JSON Schema shipped beside this module (``report.schema.json``, loaded by
:func:`report_schema`), checked against every report the test suite writes. In short::

    {"format_version": "1.1", "tool", "version", "started_at": "2026-01-31T09:00:00.000Z",
     "target": {"base_url", "profile", "model", "features", "embedded"},
     "connection": {"proxy", "cacert", "cert", "insecure", "weakened"}, "weakened",
     "strict", "options": ["--timeout 10", ...], "passed", "exit_code",
     "summary": {"PASS": n, "FAIL": n, "NON_STRICT": n, "SKIP": n, "ERROR": n, "total": n},
     "coverage": {"judged": {"MUST": n, ...}, "total": {...}, "skipped": {why: n},
                  "unjudged_must": [rule IDs], "fail_on_skip"},
     "results": [{"rule", "level", "verdict", "message", "area", "title", "requirement",
                  "citation", "source", "faults", "finding": {...} | null,
                  "findings": [{"message", "expected", "actual", "path", "evidence",
                                "exchange", "curl"}], "exchanges": [labels]}],
     "stats": {"requests", "wall_seconds", "time_to_first_token", "inter_token_latency",
               "completions", "refused": {kind: {"count", "first"}}},
     "search": null | {"seed", "examples", "retried", "stop_reason", "errors"},
     "exchanges": {"probe/key": {...}}}

``format_version`` is MAJOR.MINOR: a new MINOR only adds fields, a new MAJOR changes or removes
one (1.1 added ``options``). ``started_at`` is when the run started, in UTC. ``options`` are the
options the run was given that change what it sent or judged (:mod:`conformance.run.given_options`;
never a secret). ``finding`` is a rule's first failing case
and ``findings`` all of them; ``faults`` are the mock faults that must make the rule fail.
``coverage`` counts the rules judged per level and the SKIPs by why
(:mod:`conformance.model.coverage`); ``stats.refused`` the completion requests refused as a
whole, by kind (:mod:`conformance.run.refusal`), with the first one's exchange label.

``search`` is set by ``conformance fuzz``: its ``results`` are the checks it judged with, and
its ``exchanges`` each finding's request and the start of its answer, labelled
``fuzz/N: POST /completions, negative data, HTTP 500, shrunk``.

Each exchange is a faithful recording that ``mockserver --replay`` can serve back: the request
(method, URL, headers, body) and the response (status, reason, headers as received, the raw
body and when each piece of it arrived). A body is ``"body"`` (text) when it is valid UTF-8,
else ``"body_base64"``; ``"chunks"`` lists ``[bytes, seconds since the request started]`` per
read. A stream adds ``"sse_lines"``, ``"events"`` (data, event, id and dispatch time) and
``"observations"`` (what the SSE parser noticed). ``"connection"`` says how the server was
reached (proxy, CA bundle, client certificate, ``insecure``); ``"weakened"`` is true when TLS
certificates were not verified.

Whatever a server sends, a report stays a few MB: a body longer than 64 KiB keeps its head
and tail (``"body"`` / ``"body_tail"``, or their ``_base64`` forms) with ``"body_cut"``
(``head_bytes``, ``tail_bytes``, ``omitted_bytes``, ``why``) saying what is missing,
``"events"`` only those within the kept bytes (at most 250; ``"events_omitted"`` counts the
rest), ``"observations"`` at most 100 (``"observations_omitted"``), and once 3 MB of cut bodies
are kept the window shrinks to 4 KiB. A body the harness itself stopped reading at a limit has
``"body_truncated"`` and a ``"body_cut"`` too. A replay refuses a cut exchange rather than serve
a different body. Secrets never reach it: requests were redacted when recorded.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from statistics import median

from conformance.model import RuleResult, RunResult, Target
from conformance.transport import Exchange
from spec import JSON

from .connection import connection_json

TOOL = "completions-conformance"
VERSION = "0.1.0"
FORMAT_VERSION = "1.1"
"""The report's shape (``report.schema.json``): MAJOR.MINOR, a new MINOR only adds fields."""
SCHEMA_FILE = "report.schema.json"


def report_schema() -> dict[str, JSON]:
    """The JSON Schema (draft 2020-12) every report this module writes validates against."""
    here = resources.files("conformance.reporting")
    text = here.joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    schema: dict[str, JSON] = json.loads(text)
    return schema


def iso_utc(moment: datetime | None) -> str | None:
    """``moment`` as ISO 8601 in UTC to the millisecond (``2026-01-31T09:00:00.000Z``)."""
    if moment is None:
        return None
    utc = moment.astimezone(timezone.utc).replace(tzinfo=None)
    return utc.isoformat(timespec="milliseconds") + "Z"


def _text(data: bytes) -> str:
    return data.decode("utf-8", "backslashreplace")


def body_json(data: bytes) -> dict[str, JSON]:
    """``{"body": text}`` when ``data`` is UTF-8, else ``{"body_base64": ...}``: never lossy."""
    try:
        return {"body": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"body_base64": base64.b64encode(data).decode("ascii")}


WINDOW = 64 << 10
"""Body bytes a report keeps of one exchange (its head and tail): every answer a well-behaved
server gives the catalog fits (the largest seen, a vocabulary listing, is 34 KB)."""
SMALL_WINDOW = 4 << 10
"""The window once the report's budget is spent."""
REPORT_BUDGET = 3 << 20
"""Bytes of cut exchanges a report keeps at full window (body, SSE lines and events each count):
whatever a server sends, a report stays a few MB."""
MAX_EVENTS = 250
MAX_OBSERVATIONS = 100
MAX_CHUNKS = 1000
MAX_RAW = 400
"""Characters of an observation's raw bytes kept."""


class ReportBudget:
    """What the exchanges of one report may still keep at full window."""

    def __init__(self, total: int = REPORT_BUDGET) -> None:
        self.left = total

    def window(self) -> int:
        return WINDOW if self.left > 0 else SMALL_WINDOW

    def spend(self, amount: int) -> None:
        self.left -= amount


def _pieces(body: bytes, window: int) -> tuple[bytes, bytes, int]:
    """``(head, tail, bytes omitted between them)`` of a body kept within ``window``."""
    if len(body) <= window:
        return body, b"", 0
    tail = window // 4
    head = window - tail
    return body[:head], body[len(body) - tail :], len(body) - head - tail


def _kept_events(exchange: Exchange, head: int, tail_from: int) -> tuple[list[JSON], int]:
    """The events that lie wholly in the kept head or tail of the stream, at most
    ``MAX_EVENTS``, and how many were left out."""
    kept: list[JSON] = []
    events = exchange.events
    for e in events:
        end = e.offset + len(e.raw)
        if (end <= head or e.offset >= tail_from) and len(kept) < MAX_EVENTS:
            kept.append({"data": e.data, "event": e.event, "id": e.id,
                         "at": round(e.dispatched_at, 6)})
    return kept, len(events) - len(kept)


def _chunks(chunks: tuple[tuple[int, float], ...]) -> list[JSON]:
    """Read sizes and times; past ``MAX_CHUNKS`` the rest merge into the last (sizes still add
    up to the bytes received)."""
    out: list[JSON] = [[size, round(at, 6)] for size, at in chunks[:MAX_CHUNKS]]
    if len(chunks) > MAX_CHUNKS:
        out[-1] = [sum(size for size, _ in chunks[MAX_CHUNKS - 1 :]), round(chunks[-1][1], 6)]
    return out


def exchange_json(exchange: Exchange, budget: ReportBudget | None = None) -> dict[str, JSON]:
    """One exchange as the report keeps it: whole when it fits the window (a replay serves it
    back byte for byte), else its head and tail with ``body_cut`` saying what is missing (a
    replay then refuses it rather than serve a different body)."""
    budget = budget or ReportBudget()
    request = exchange.request
    head, tail, omitted = _pieces(exchange.body, budget.window())
    out: dict[str, JSON] = {
        "request": {
            "method": request.method,
            "url": request.url,
            "headers": [list(h) for h in request.headers],
            **body_json(request.body[:WINDOW]),
        },
        "status": exchange.status,
        "reason": exchange.reason,
        "http_version": exchange.http_version,
        "headers": [list(h) for h in exchange.headers],
        "termination": str(exchange.termination),
        "error": exchange.error,
        "timings": dataclasses.asdict(exchange.timings),
        "bytes_received": exchange.bytes_received,
        "body_truncated": exchange.body_truncated,
        **body_json(head),
        "chunks": _chunks(exchange.chunks),
    }
    if exchange.resent_after is not None:
        out["resent_after"] = exchange.resent_after
    cut = bool(omitted) or exchange.body_truncated
    missing = exchange.bytes_received - len(head) - len(tail)
    if cut:
        for key, value in body_json(tail).items():  # body_tail, or body_tail_base64
            out[key.replace("body", "body_tail", 1)] = value
        out["body_cut"] = {
            "head_bytes": len(head), "tail_bytes": len(tail), "omitted_bytes": missing,
            "why": "the report keeps the head and tail of a long body" if omitted
            else "the harness kept only the start of the body",
        }
        budget.spend(3 * (len(head) + len(tail)))
    if exchange.is_sse:
        encoded = (exchange.content_encoding or "identity").strip().lower() != "identity"
        lines = [] if encoded else _text(head).splitlines()  # compressed bytes are no lines
        if cut and not encoded:
            lines += [f"[{missing} bytes cut]", *_text(tail).splitlines()]
        out["sse_lines"] = lines
        tail_from = exchange.bytes_received - len(tail) if cut else len(head)
        events, left_out = _kept_events(exchange, len(head), tail_from)
        out["events"] = events
        if left_out:
            out["events_omitted"] = left_out
        out["observations"] = [
            {"code": o.code, "message": o.message, "offset": o.offset,
             "raw": _text(o.raw[:MAX_RAW])}
            for o in exchange.observations[:MAX_OBSERVATIONS]
        ]
        if len(exchange.observations) > MAX_OBSERVATIONS:
            out["observations_omitted"] = len(exchange.observations) - MAX_OBSERVATIONS
    return out


def result_json(result: RuleResult) -> dict[str, JSON]:
    rule = result.rule
    finding = dataclasses.asdict(result.finding) if result.finding else None
    return {
        "rule": rule.id,
        "level": str(rule.level),
        "verdict": str(result.verdict),
        "message": result.message,
        "area": rule.area,
        "title": rule.title,
        "requirement": rule.requirement,
        "citation": rule.citation,
        "source": str(rule.source),
        "faults": list(rule.faults),
        "finding": finding,
        "findings": [dataclasses.asdict(f) for f in result.findings],
        "exchanges": list(result.exchanges),
    }


def _summary_stats(values: tuple[float, ...]) -> dict[str, JSON] | None:
    if not values:
        return None
    ordered = sorted(values)
    return {
        "count": len(ordered),
        "median_s": round(median(ordered), 6),
        "p95_s": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 6),
        "max_s": round(ordered[-1], 6),
    }


def _coverage(result: RunResult) -> dict[str, JSON]:
    coverage = result.coverage
    return {
        "judged": dict(coverage.judged),
        "total": dict(coverage.total),
        "skipped": dict(coverage.skipped),
        "unjudged_must": list(coverage.unjudged_must),
        "fail_on_skip": result.fail_on_skip,
    }


def target_json(target: Target) -> dict[str, JSON]:
    """The report's ``target``: every field of :class:`Target`, in its order, with
    ``profile_name`` under the key it has always had, ``profile``."""
    return {("profile" if key == "profile_name" else key): value
            for key, value in dataclasses.asdict(target).items()}


def report_json(result: RunResult) -> dict[str, JSON]:
    counts = {str(v): n for v, n in result.counts().items()}
    budget = ReportBudget()
    return {
        "format_version": FORMAT_VERSION,
        "tool": TOOL,
        "version": VERSION,
        "started_at": iso_utc(result.started_at),
        "target": target_json(result.target),
        "connection": connection_json(result),
        "weakened": connection_json(result)["weakened"],
        "strict": result.strict,
        "options": list(result.options),
        "passed": result.passed,
        "exit_code": result.exit_code,
        "summary": {**counts, "total": len(result.results)},
        "coverage": _coverage(result),
        "results": [result_json(r) for r in result.results],
        "stats": {
            "requests": result.stats.requests,
            "wall_seconds": round(result.stats.wall_seconds, 3),
            "time_to_first_token": _summary_stats(result.stats.ttft_seconds),
            "inter_token_latency": _summary_stats(result.stats.itl_seconds),
            "completions": result.stats.completions,
            "refused": {kind: {"count": count, "first": first}
                        for kind, count, first in result.stats.refused},
        },
        "search": dataclasses.asdict(result.search) if result.search else None,
        "exchanges": {label: exchange_json(ex, budget) for label, ex in result.exchanges.items()},
    }


def write_json(result: RunResult, path: str | Path) -> None:
    Path(path).write_text(
        json.dumps(report_json(result), ensure_ascii=False, indent=1), encoding="utf-8"
    )
