"""Each rule's share of a run's time, for reports that give every rule a duration.

The runner sends the probes first, concurrently, and only then judges each rule on the recorded
exchanges, so no rule has a time of its own. What a rule costs is the requests it reads: each
exchange's duration is split evenly among the rules that read it, and the shares are scaled so
that they add up to the run's wall time (concurrent requests overlap, so their durations add up
to more than it). A rule that read nothing (a feature not claimed) costs nothing.
"""

from __future__ import annotations

from collections import Counter

from .results import RunResult


def rule_seconds(result: RunResult) -> dict[str, float]:
    """Seconds of ``result.stats.wall_seconds`` owed to each rule, by rule ID.

    When no rule read a timed exchange, the wall time is split evenly, so the shares still add
    up to the run."""
    readers = Counter(label for item in result.results for label in set(item.exchanges))
    weights: dict[str, float] = {}
    for item in result.results:
        weights[item.rule.id] = sum(
            result.exchanges[label].timings.ended_at / readers[label]
            for label in set(item.exchanges)
            if label in result.exchanges
        )
    total = sum(weights.values())
    wall = result.stats.wall_seconds
    if total <= 0:
        even = wall / len(weights) if weights else 0.0
        return dict.fromkeys(weights, even)
    return {rule_id: wall * weight / total for rule_id, weight in weights.items()}
