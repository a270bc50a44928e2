"""Plain-text pieces every reporter shares: how a finding reads, how a value is shown."""

from __future__ import annotations

import json

from conformance.model import RuleResult, RunResult, RunStats
from conformance.run.refusal import RATE_LIMIT_HINT
from spec import JSON


def show(value: JSON, limit: int = 400) -> str:
    """A value as JSON text (strings quoted), cut to ``limit`` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _ms(values: tuple[float, ...], share: float) -> str:
    ordered = sorted(values)
    return f"{1000 * ordered[min(len(ordered) - 1, int(len(ordered) * share))]:.1f} ms"


def latency_line(stats: RunStats) -> str | None:
    """Time to first token and inter-token latency of the run's streams, in one line."""
    if not stats.ttft_seconds:
        return None
    line = (
        f"time to first token: median {_ms(stats.ttft_seconds, 0.5)}, "
        f"p95 {_ms(stats.ttft_seconds, 0.95)} over {len(stats.ttft_seconds)} streams"
    )
    if stats.itl_seconds:
        line += (
            f"; inter-token latency: median {_ms(stats.itl_seconds, 0.5)}, "
            f"p95 {_ms(stats.itl_seconds, 0.95)}"
        )
    return line


REFUSAL_WORDS = {
    "auth": "API key refused (401/403)",
    "not-found": "404",
    "rate-limited": "rate limited (429 after the retries)",
    "unavailable": "unavailable (503 after the retries)",
    "no-answer": "no answer",
}
"""How the summary names each kind of :class:`conformance.run.refusal.Refusal`."""


def refused_line(stats: RunStats) -> str | None:
    """How many completion requests the server refused as a whole, by kind, so a run whose
    rules SKIP for a rate limit says so in its summary (and what to do)."""
    if not stats.refused:
        return None
    total = sum(count for _, count, _ in stats.refused)
    kinds = ", ".join(f"{REFUSAL_WORDS.get(kind, kind)} {count}"
                      for kind, count, _ in stats.refused)
    hint = f"; {RATE_LIMIT_HINT}" if stats.refused_count("rate-limited") else ""
    return (f"refused, not judged: {total} of {stats.completions} completion requests "
            f"({kinds}){hint}")


def search_lines(result: RunResult) -> list[str]:
    """How a fuzz run went and how to replay it (nothing for ``conformance run``)."""
    search = result.search
    if search is None:
        return []
    return [
        f"seed: {search.seed}  (add --seed {search.seed} to replay this run)",
        f"examples: {search.examples}, requests: {result.stats.requests} ({search.retried} "
        f"retried after 429/503), {result.stats.wall_seconds:.1f} s, stopped: "
        f"{search.stop_reason}",
    ]


def finding_lines(result: RuleResult) -> list[tuple[str, str]]:
    """``(label, text)`` pairs describing a result's finding, in reading order."""
    rule = result.rule
    lines = [
        ("Rule", f"{rule.id} [{rule.level}] {rule.title}"),
        ("Requirement", rule.requirement),
        ("Source", f"{rule.citation} ({rule.source})"),
    ]
    finding = result.finding
    if finding is None:
        lines.append(("Message", result.message))
        return lines
    lines.append(("Message", finding.message))
    if finding.path:
        lines.append(("Path", finding.path))
    if finding.expected is not None or finding.actual is not None:
        lines.append(("Expected", show(finding.expected)))
        lines.append(("Actual", show(finding.actual)))
    if finding.exchange:
        lines.append(("Exchange", finding.exchange))
    if finding.evidence:
        lines.append(("Evidence", finding.evidence))
    if finding.curl:
        lines.append(("Reproduce", finding.curl))
    for number, case in enumerate(result.more, 2):
        where = f" ({case.exchange})" if case.exchange else ""
        lines.append((f"Case {number}", case.message + where))
    return lines
