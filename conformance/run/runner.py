"""Run a selection of rules: run the probes they need, concurrently, then evaluate each rule.

The runner owns no output: it reports progress through a :class:`Progress` (the CLI's console
progress, or nothing) and returns a :class:`~conformance.model.RunResult` that reporters read.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from typing import Protocol

from conformance.client import Client, RunStopped
from conformance.model import (
    Finding,
    HarnessProblem,
    Level,
    NotApplicable,
    Rule,
    RuleResult,
    RunResult,
    RunStats,
    Target,
    Verdict,
    Violation,
)
from conformance.probes import PROBES, ProbeOutcome, ProbeSession, probe_closure
from conformance.run import refusal
from conformance.run.check_context import CheckContext
from conformance.run.latency import Latency, chunk_times
from conformance.run.settings import Settings
from conformance.transport import Exchange, open_session, redact_url, to_curl
from conformance.views import StreamView


class Progress(Protocol):
    def start(self, probes: int, rules: int) -> None: ...
    def request(self, exchange: Exchange) -> None: ...
    def probe_done(self, name: str, outcome: ProbeOutcome) -> None: ...
    def finish(self) -> None: ...


class NoProgress:
    def start(self, probes: int, rules: int) -> None:
        pass

    def request(self, exchange: Exchange) -> None:
        pass

    def probe_done(self, name: str, outcome: ProbeOutcome) -> None:
        pass

    def finish(self) -> None:
        pass


def needed_probes(rules: Iterable[Rule], settings: Settings) -> list[str]:
    """The probes the applicable rules read (rules whose features are claimed), with the
    probes those depend on."""
    names: set[str] = set()
    for rule in rules:
        if all(settings.claims(f) for f in rule.features):
            names.update(rule.probes)
    return probe_closure(names)


async def _run_probe(
    name: str,
    settings: Settings,
    client: Client,
    outcomes: dict[str, ProbeOutcome],
    tasks: Mapping[str, asyncio.Task[ProbeOutcome]],
) -> ProbeOutcome:
    probe = PROBES[name]
    for need in probe.needs:
        await tasks[need]
    if not settings.profile.has_traits(probe.traits):
        needs = ", ".join(probe.traits)
        return ProbeOutcome(name, skipped=f"not a probe of this profile (it needs {needs})")
    if probe.operation not in settings.profile.operations:
        return ProbeOutcome(name, skipped=f"the profile has no {probe.operation} operation")
    unclaimed = [f for f in probe.features if not settings.claims(f)]
    if unclaimed:
        return ProbeOutcome(name, skipped=f"feature not claimed: {', '.join(unclaimed)}")
    session = ProbeSession(probe, settings, client, outcomes)
    try:
        await probe.run(session)
    except RunStopped as exc:  # the budget, the run's deadline, or a server gone silent
        session.outcome.skipped = f"not finished: {exc}"
    except Exception as exc:  # a harness bug: the rules reading this probe report ERROR
        session.outcome.problem = f"{type(exc).__name__}: {exc}"
    return session.outcome


async def run_probes(
    settings: Settings, names: list[str], progress: Progress
) -> tuple[dict[str, ProbeOutcome], Client]:
    """Run ``names`` concurrently (dependencies first); returns the outcomes and the client
    that sent their requests (its counts, and why it stopped early if it did)."""
    outcomes: dict[str, ProbeOutcome] = {}
    async with open_session() as session:
        client = Client(settings, session, on_request=progress.request)
        tasks: dict[str, asyncio.Task[ProbeOutcome]] = {}

        async def one(name: str) -> ProbeOutcome:
            outcome = await _run_probe(name, settings, client, outcomes, tasks)
            outcomes[name] = outcome
            progress.probe_done(name, outcome)
            return outcome

        for name in names:
            tasks[name] = asyncio.ensure_future(one(name))
        await asyncio.gather(*tasks.values())
    return {name: outcomes[name] for name in names}, client


def evaluate(
    rule: Rule,
    settings: Settings,
    outcomes: Mapping[str, ProbeOutcome],
    views: dict[int, StreamView],
) -> RuleResult:
    """The verdict of one rule over the recorded probes."""
    labels = tuple(
        outcomes[p].label(key)
        for p in rule.probes
        if p in outcomes
        for key in outcomes[p].exchanges
    )
    unclaimed = [f for f in rule.features if not settings.claims(f)]
    if unclaimed:
        return RuleResult(rule, Verdict.SKIP, f"feature not claimed: {', '.join(unclaimed)}")
    ctx = CheckContext(rule, settings, outcomes, views)
    try:
        rule.check(ctx)
    except Violation as violation:
        verdict = Verdict.FAIL if rule.level is Level.MUST else Verdict.NON_STRICT
        first, *more = (_finding(outcomes, v) for v in (violation, *violation.also))
        return RuleResult(rule, verdict, violation.message, first, labels, tuple(more))
    except NotApplicable as signal:
        reason = signal.reason
        refused = ctx.refusals() if not ctx.judged else []
        if refused and not reason.startswith(refusal.NOT_JUDGED):
            # what the check missed was not sent, or not usable, because of a refusal: name it
            reason = f"{reason}; {refusal.summary(refused, retries=settings.retries)}"
        return RuleResult(rule, Verdict.SKIP, reason, exchanges=labels)
    except HarnessProblem as signal:
        return RuleResult(rule, Verdict.ERROR, signal.reason, exchanges=labels)
    except Exception as exc:
        where = traceback.extract_tb(exc.__traceback__)[-1]
        message = f"harness error: {type(exc).__name__}: {exc} ({where.filename}:{where.lineno})"
        return RuleResult(rule, Verdict.ERROR, message, exchanges=labels)
    if not ctx.judged:  # a PASS on nothing would be a lie
        reason = ctx.unjudged() or refusal.summary(ctx.refusals(), retries=settings.retries)
        return RuleResult(rule, Verdict.SKIP, reason, exchanges=labels)
    return RuleResult(rule, Verdict.PASS, exchanges=labels)


def _finding(outcomes: Mapping[str, ProbeOutcome], violation: Violation) -> Finding:
    exchange = _find(outcomes, violation.exchange)
    return Finding.of(violation, to_curl(exchange) if exchange is not None else None)


def _find(outcomes: Mapping[str, ProbeOutcome], label: str | None) -> Exchange | None:
    if not label or "/" not in label:
        return None
    probe, key = label.split("/", 1)
    outcome = outcomes.get(probe)
    return outcome.exchanges.get(key) if outcome else None


def _stats(
    outcomes: Mapping[str, ProbeOutcome],
    views: dict[int, StreamView],
    client: Client,
    wall: float,
) -> RunStats:
    latency = Latency()
    completions = answered = 0
    refused: dict[str, tuple[int, str]] = {}
    statuses: dict[int | None, tuple[int, str]] = {}
    for outcome in outcomes.values():
        for key, exchange in outcome.exchanges.items():
            if (outcome.operation == "completions" and key not in outcome.auxiliary
                    and key not in outcome.invalid):  # what a refused run is judged on
                completions += 1
                answered += exchange.status is not None
                kind = refusal.refusal_of(exchange)
                if kind is not None:
                    count, first = refused.get(kind.value, (0, outcome.label(key)))
                    refused[kind.value] = (count + 1, first)
                count, first = statuses.get(exchange.status, (0, outcome.label(key)))
                statuses[exchange.status] = (count + 1, first)
            latency.add(chunk_times(exchange, views.get(id(exchange))))
    return RunStats(client.sent, wall, tuple(latency.ttft), tuple(latency.gaps), completions,
                    tuple((kind, count, first) for kind, (count, first) in refused.items()),
                    answered=answered, stopped=client.stopped,
                    statuses=tuple((status, count, first)
                                   for status, (count, first) in statuses.items()))


async def execute(
    settings: Settings,
    rules: list[Rule],
    *,
    progress: Progress | None = None,
    strict: bool = False,
    embedded: bool = False,
) -> RunResult:
    """Run ``rules`` against the target in ``settings``."""
    progress = progress or NoProgress()
    started_at = datetime.now(timezone.utc)
    started = time.perf_counter()
    names = needed_probes(rules, settings)
    progress.start(len(names), len(rules))
    outcomes, client = await run_probes(settings, names, progress)
    views: dict[int, StreamView] = {}
    results = tuple(evaluate(rule, settings, outcomes, views) for rule in rules)
    progress.finish()
    exchanges = {
        outcome.label(key): exchange
        for outcome in outcomes.values()
        for key, exchange in outcome.exchanges.items()
    }
    target = Target(
        base_url=_redacted(settings.base_url),
        profile_name=settings.profile.name,
        model=settings.model,
        features=tuple(sorted(settings.features)),
        embedded=embedded,
    )
    wall = time.perf_counter() - started
    return RunResult(target, results, exchanges, _stats(outcomes, views, client, wall), strict,
                     started_at=started_at)


def _redacted(url: str) -> str:
    return redact_url(url)
