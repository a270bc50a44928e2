"""The JSON report: the whole result model, every exchange with its raw SSE lines.

Shape::

    {"tool", "version", "target", "connection", "weakened", "strict", "passed", "exit_code",
     "summary": {"PASS": n, "FAIL": n, "NON_STRICT": n, "SKIP": n, "ERROR": n, "total": n},
     "results": [{"rule", "level", "verdict", "message", "area", "title", "requirement",
                  "citation", "source", "finding": {...} | null, "exchanges": [...]}],
     "stats": {...}, "search": null | {"seed", "examples", "retried", "stop_reason", "errors"},
     "exchanges": {"probe/key": {...}}}

``search`` is set by ``conformance fuzz``: its ``results`` are the checks it judged with, and
its ``exchanges`` each finding's request and the start of its answer, labelled
``fuzz/N: POST /completions, negative data, HTTP 500, shrunk``.

Each exchange is a faithful recording that ``mockserver --replay`` can serve back: the request
(method, URL, headers, body) and the response (status, reason, headers as received, the raw
body and when each piece of it arrived). A body is ``"body"`` (text) when it is valid UTF-8,
else ``"body_base64"``; ``"chunks"`` lists ``[bytes, seconds since the request started]`` per
read. ``"connection"`` says how the server was reached (proxy, CA bundle, client certificate,
``insecure``); ``"weakened"`` is true when TLS certificates were not verified. Secrets never
reach it: requests were redacted when recorded.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from pathlib import Path
from statistics import median

from conformance.model import RuleResult, RunResult
from conformance.transport import Exchange
from spec import JSON

from .connection import connection_json

TOOL = "completions-conformance"
VERSION = "0.1.0"


def _text(data: bytes) -> str:
    return data.decode("utf-8", "backslashreplace")


def body_json(data: bytes) -> dict[str, JSON]:
    """``{"body": text}`` when ``data`` is UTF-8, else ``{"body_base64": ...}``: never lossy."""
    try:
        return {"body": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"body_base64": base64.b64encode(data).decode("ascii")}


def exchange_json(exchange: Exchange) -> dict[str, JSON]:
    request = exchange.request
    out: dict[str, JSON] = {
        "request": {
            "method": request.method,
            "url": request.url,
            "headers": [list(h) for h in request.headers],
            **body_json(request.body),
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
        **body_json(exchange.body),
        "chunks": [[size, round(at, 6)] for size, at in exchange.chunks],
    }
    if exchange.is_sse:
        out["sse_lines"] = _text(exchange.body).splitlines()
        out["events"] = [
            {"data": e.data, "event": e.event, "id": e.id, "at": round(e.dispatched_at, 6)}
            for e in exchange.events
        ]
        out["observations"] = [
            {"code": o.code, "message": o.message, "offset": o.offset, "raw": _text(o.raw)}
            for o in exchange.observations
        ]
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


def report_json(result: RunResult) -> dict[str, JSON]:
    counts = {str(v): n for v, n in result.counts().items()}
    return {
        "tool": TOOL,
        "version": VERSION,
        "target": dataclasses.asdict(result.target),
        "connection": connection_json(result),
        "weakened": connection_json(result)["weakened"],
        "strict": result.strict,
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
        "exchanges": {label: exchange_json(ex) for label, ex in result.exchanges.items()},
    }


def write_json(result: RunResult, path: str | Path) -> None:
    Path(path).write_text(
        json.dumps(report_json(result), ensure_ascii=False, indent=1), encoding="utf-8"
    )
