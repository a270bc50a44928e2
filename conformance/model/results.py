"""The result model: what a run found. Reporters read it and nothing else.

A :class:`RunResult` holds the target, one :class:`RuleResult` per selected rule and every
recorded exchange (by ``probe/key``), with secrets already redacted by the recorder.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from conformance.transport import Exchange

from .coverage import Coverage, coverage_of
from .rule_result import RuleResult
from .verdicts import VERDICT_ORDER, Verdict


@dataclass(frozen=True)
class Target:
    """What was tested, for the report header (no secrets: the URL is redacted)."""

    base_url: str
    profile_name: str
    """The profile's name (the JSON report's ``target.profile``)."""
    model: str
    features: tuple[str, ...]
    embedded: bool = False


@dataclass(frozen=True)
class RunStats:
    requests: int = 0
    wall_seconds: float = 0.0
    ttft_seconds: tuple[float, ...] = ()
    """Time to first token of each successful stream (first chunk event)."""
    itl_seconds: tuple[float, ...] = ()
    """Gaps between consecutive chunk events of successful streams."""
    completions: int = 0
    """Valid requests recorded with the completions operation (each after its retries)."""
    refused: tuple[tuple[str, int, str], ...] = ()
    """Of those, the ones refused as a whole (:mod:`conformance.run.refusal`): ``(kind, count,
    first exchange's label)`` per kind, in the order first seen."""
    answered: int = 0
    """Of the completions, the ones that got a status line, whatever it said."""
    stopped: str | None = None
    """Why the run stopped sending before its probes were done (``--run-timeout`` passed, or
    the server stopped answering), or None."""
    statuses: tuple[tuple[int | None, int, str], ...] = ()
    """Of the completions, how many got each status (None: no status line), with the first
    exchange's label, in the order first seen: whether any got a 2xx (:attr:`succeeded`)."""

    @property
    def succeeded(self) -> int | None:
        """Of the completions, the ones answered 2xx; None when the run did not count them."""
        if not self.statuses:
            return None
        return sum(count for status, count, _ in self.statuses
                   if status is not None and 200 <= status < 300)

    def refused_count(self, kind: str) -> int:
        return sum(count for name, count, _ in self.refused if name == kind)


@dataclass(frozen=True)
class Search:
    """What a fuzz run did to find its results: the seed that replays it, and its extent."""

    seed: int
    examples: int
    retried: int = 0
    """Requests sent again after 429 / 503."""
    stop_reason: str = "completed"
    errors: tuple[str, ...] = ()
    """What went wrong in the run itself (not the server's fault to judge)."""


@dataclass(frozen=True)
class RunResult:
    """One run's results: ``conformance run`` (probes, then the catalog) or ``conformance
    fuzz`` (``search`` set: generated requests, each judged as it came back)."""

    target: Target
    results: tuple[RuleResult, ...]
    exchanges: Mapping[str, Exchange] = field(default_factory=dict, repr=False)
    """Every recorded exchange by label: left out of ``repr`` (bodies and events would make
    it megabytes)."""
    stats: RunStats = field(default_factory=RunStats)
    strict: bool = False
    notes: tuple[str, ...] = ()
    fail_on_skip: bool = False
    """``--fail-on-skip``: a MUST rule of a claimed feature that could not be judged fails."""
    search: Search | None = None
    started_at: datetime | None = None
    options: tuple[str, ...] = ()
    """The options the run was given that change what it sent or judged, as typed
    (:mod:`conformance.run.given_options`); secrets are never among them."""
    """When the run started (UTC); None for a result not built by a run."""

    @property
    def run_errors(self) -> tuple[str, ...]:
        """What went wrong in a fuzz run itself (none for ``conformance run``)."""
        return self.search.errors if self.search is not None else ()

    def counts(self) -> dict[Verdict, int]:
        tally = Counter(result.verdict for result in self.results)
        return {verdict: tally.get(verdict, 0) for verdict in VERDICT_ORDER}

    def by_area(self) -> dict[str, dict[Verdict, int]]:
        table: dict[str, Counter[Verdict]] = {}
        for result in self.results:
            table.setdefault(result.area, Counter())[result.verdict] += 1
        return {
            area: {verdict: tally.get(verdict, 0) for verdict in VERDICT_ORDER}
            for area, tally in sorted(table.items())
        }

    def failures(self) -> list[RuleResult]:
        """FAIL, NON_STRICT and ERROR results, in catalog order."""
        bad = (Verdict.FAIL, Verdict.NON_STRICT, Verdict.ERROR)
        return [result for result in self.results if result.verdict in bad]

    @property
    def coverage(self) -> Coverage:
        return coverage_of(self.results)

    @property
    def passed(self) -> bool:
        if self.fail_on_skip and self.coverage.unjudged_must:
            return False
        if self.run_errors:
            return False
        return not any(result.verdict.fails(strict=self.strict) for result in self.results)

    @property
    def exit_code(self) -> int:
        """0 passed, 1 a rule failed, 2 a fuzz run that broke down without finding anything
        (its errors are the harness's, not the server's)."""
        failed = any(result.verdict.fails(strict=self.strict) for result in self.results)
        if self.run_errors and not failed:
            return 2
        return 0 if self.passed else 1
