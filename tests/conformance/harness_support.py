"""Helpers for the harness's proof tests: run the catalog against a URL in-process, and build
hand-made exchanges for unit tests of checks."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable

import spec
from conformance.model import Rule, RunResult
from conformance.rules import CATALOG
from conformance.run.runner import execute
from conformance.run.settings import Settings
from conformance.sse import SSEParser
from conformance.transport import Exchange, Limits, RecordedRequest, Termination, Timings

MODEL = "reference-ngram"


def peak_rss_kib() -> int:
    """This process's peak RSS. ``VmHWM`` belongs to the current address space; Linux carries
    ``ru_maxrss`` over ``exec`` from the parent, so a child of a big pytest process would
    report the parent's peak."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
FAST_LIMITS = Limits(total_time=20.0, idle_timeout=1.0, connect_timeout=5.0)


def settings_for(
    url: str,
    profile_name: str,
    *,
    faults: Iterable[str] = (),
    limits: Limits = FAST_LIMITS,
    headers: Iterable[tuple[str, str]] = (),
    **options: object,
) -> Settings:
    chosen = spec.get_profile(profile_name)
    extra = list(headers)
    names = list(faults)
    if names:
        extra.append(("X-Mock-Fault", ",".join(names)))
    return Settings(
        base_url=url, profile=chosen, model=MODEL, features=chosen.features,
        headers=tuple(extra), limits=limits, **options,  # type: ignore[arg-type]
    )


def run_catalog(
    url: str,
    profile_name: str,
    *,
    faults: Iterable[str] = (),
    select: Iterable[str] = (),
    limits: Limits = FAST_LIMITS,
    **options: object,
) -> RunResult:
    settings = settings_for(url, profile_name, faults=faults, limits=limits, **options)
    rules = CATALOG.select(profile=settings.profile, select=list(select))
    return asyncio.run(execute(settings, rules))


def verdicts(result: RunResult) -> dict[str, str]:
    return {r.rule.id: r.verdict.value for r in result.results}


def not_passing(result: RunResult) -> dict[str, str]:
    return {
        r.rule.id: f"{r.verdict.value}: {r.message}"
        for r in result.results
        if r.verdict.value not in ("PASS", "SKIP")
    }


def rule(rule_id: str) -> Rule:
    return CATALOG.get(rule_id)


# -- hand-built exchanges ------------------------------------------------------------------


def request(body: dict | None = None) -> RecordedRequest:
    data = json.dumps(body).encode() if body is not None else b""
    return RecordedRequest("POST", "http://example.test/v1/completions", (), data)


def json_exchange(body: object, *, status: int = 200, request_body: dict | None = None,
                  content_type: str = "application/json") -> Exchange:
    raw = json.dumps(body).encode()
    return Exchange(
        request=request(request_body), termination=Termination.EOF, timings=Timings(0.0),
        status=status, headers=(("Content-Type", content_type),), body=raw,
        bytes_received=len(raw),
    )


def sse_exchange(raw: bytes, *, request_body: dict | None = None,
                 termination: Termination = Termination.EOF) -> Exchange:
    """An exchange whose body ``raw`` went through the real SSE parser."""
    parser = SSEParser()
    events = parser.feed(raw, 0.01)
    if termination is Termination.EOF:
        parser.close(0.02)
    return Exchange(
        request=request(request_body), termination=termination, timings=Timings(0.0),
        status=200, headers=(("Content-Type", "text/event-stream"),), body=raw,
        bytes_received=len(raw), is_sse=True, events=tuple(events),
        observations=parser.observations, comments=parser.comments,
        observation_counts=parser.observation_counts,
    )


def chunk(index: int, text: str, finish: str | None = None, **extra: object) -> dict:
    return {
        "id": "cmpl-1", "object": "text_completion", "created": 1, "model": MODEL,
        "choices": [{"index": index, "text": text, "logprobs": None, "finish_reason": finish}],
        **extra,
    }


def frames(*payloads: object, done: bool = True) -> bytes:
    out = b"".join(b"data: " + json.dumps(p).encode() + b"\n\n" for p in payloads)
    return out + (b"data: [DONE]\n\n" if done else b"")
