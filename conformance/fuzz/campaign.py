"""One fuzz campaign: schemathesis' engine, driven from Python, against one profile's document.

Why the engine and not ``st run`` in a child process: the run needs what the command line cannot
give. Every request goes through the harness's guard (a request budget, backoff on 429 / 503;
:mod:`conformance.fuzz.guard`); failures are reproduced with the harness's own curl
commands, which paste as is with secrets in shell variables (schemathesis' sanitiser writes
``[Filtered]`` for every body key containing "token", ``max_tokens`` included, so its commands
do not reproduce); findings are shrunk afterwards (the engine does not shrink them:
:mod:`conformance.fuzz.shrink`), resending cases of the run's own schemas; secrets never reach
a child's argv; and the exit status says findings (1) apart from a run that could not be made
(2). The engine does the rest: the examples, coverage and fuzzing phases, positive and negative
generation, worker threads, and a seed that replays the run exactly (unless an example
database is kept, ``--example-db`` / ``--keep-examples``: it replays earlier runs' examples
first, and what it holds changes what a seed finds). With a database, the failures earlier runs
found are sent again before the search (:mod:`conformance.fuzz.replay`), and this run's are
kept for the next.
"""

from __future__ import annotations

import math
import os
import secrets
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import requests
import schemathesis
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase
from schemathesis.config import SchemathesisConfig
from schemathesis.engine import StopReason, events, from_schema

from conformance.contract.validity import classify
from conformance.run.settings import MAX_EVENTS, Settings
from conformance.transport import redact_url

from . import stream as _stream  # noqa: F401 - registers the text/event-stream deserializer
from .bodies import cap
from .checks import FuzzRun, attach, detach, select_rules
from .config import BUILTIN_CHECKS, TESTING_PHASES, FuzzConfig, FuzzResult
from .constants import no_local_constants
from .document import fuzz_document, relative_path, without_examples
from .example_db import ScopedDatabase, search_scope, use_database
from .findings import FindingCollector, RuleOf
from .guard import BudgetSpent, NetworkFailure, RequestGuard
from .hooks import install
from .produced import Produced, ask
from .progress import Live, Messages, Reporter, Tally
from .replay import Replay, replay_failures, save_findings, stored_failures
from .shrink_findings import shrink_findings
from .storage import default_example_db, hypothesis_dir, hypothesis_home, user_cache_dir
from .transport import GuardedOpenApiSchema, guard_schema
from .unanswered import unanswered_rule
from .worker_crashes import worker_crashes

Progress = Callable[[str], None]
RECORDED_BYTES = 64 * 1024
"""Of each response body, what the engine's scenario records keep (its default: 1 MiB)."""
SHRINK_SHARE = 0.2
"""Of a ``--time-budget``, what the search leaves for shrinking its findings."""
SHRINK_RESERVE_FROM = 10.0
"""Budgets shorter than this leave nothing aside: the search would get too little to start."""


def _config(settings: Settings, config: FuzzConfig, seed: int, checks: list[str], *,
            database: bool) -> SchemathesisConfig:
    """The run's schemathesis configuration, in the keys of ``schemathesis.toml``."""
    phases = {name: {"enabled": name in config.phases}
              for name in ("examples", "coverage", "fuzzing", "stateful")}
    data: dict[str, object] = {
        "seed": seed,
        "base-url": settings.base_url.rstrip("/"),
        "workers": config.workers,
        "request-timeout": settings.limits.total_time,
        # a stream is read to its end (the harness's event limit), never cut at 20 events
        "max-stream-events": MAX_EVENTS,
        # a server may have several defects: keep testing after the first one is found
        "continue-on-failure": True,
        "phases": phases,
        # the engine keeps every response of an operation's scenario until it ends (hundreds in
        # the coverage phase): the report needs an excerpt of each, not a megabyte
        "output": {"truncation": {"max-recorded-payload-size": RECORDED_BYTES}},
        "checks": {"enabled": False, **{name: {"enabled": True} for name in checks}},
        "generation": {
            "mode": config.mode,
            "max-examples": config.max_examples,
            "no-shrink": not config.shrink,
            # the database object itself is given to the schema (:func:`use_database`)
            "database": ":memory:" if database else "none",
        },
    }
    if config.time_budget:
        data["max-time"] = math.ceil(config.time_budget)
    headers = dict(settings.request_headers())
    if headers:
        data["headers"] = headers
    return SchemathesisConfig.from_dict(data)


def fuzz(settings: Settings, config: FuzzConfig, *, progress: Reporter | Progress | None = None
         ) -> FuzzResult:
    """Fuzz ``settings``' target with ``config``; never raises for what the server does.

    ``progress`` hears of the run as it goes (:mod:`.progress`; a plain function gets the
    messages and phase names). Hypothesis' files go to ``config.cache_dir``, by default the
    user's cache directory (read from the environment here, once), never the current one."""
    report: Reporter = (Messages(progress) if callable(progress)
                        else progress if progress is not None else Messages(lambda _: None))
    cache = config.cache_dir or user_cache_dir(os.environ, platform=sys.platform,
                                               home=Path.home())
    home = hypothesis_dir(cache)
    database: ExampleDatabase | None = None
    if config.keep_examples:
        where = config.example_db if config.example_db is not None else default_example_db(home)
        database = DirectoryBasedExampleDatabase(where) if isinstance(where, Path) else where
    with hypothesis_home(home), no_local_constants():
        return _fuzz(settings, config, report, database=database)


def _fuzz(settings: Settings, config: FuzzConfig, report: Reporter, *,
          database: ExampleDatabase | None) -> FuzzResult:
    seed = config.seed if config.seed is not None else secrets.randbits(32)
    rules = select_rules(settings, strict=config.strict, select=list(config.select),
                         deselect=list(config.deselect))
    checks = [*BUILTIN_CHECKS, *(rule.id for rule in rules)]
    started = time.monotonic()
    limit = config.time_budget or config.time_limit
    guard = RequestGuard(max_requests=config.max_requests, retries=settings.retries,
                         max_wait=settings.max_retry_wait,
                         secret_headers=settings.secret_header_names, network=settings.network,
                         limits=settings.limits, time_budget=limit)
    operations = {
        f"{op.method.upper()} {relative_path(settings.profile, op.path)}": name
        for name, op in settings.profile.operations.items()
    }
    result = FuzzResult(seed=seed, profile_name=settings.profile.name,
                        base_url=redact_url(settings.base_url), checks=tuple(checks),
                        network=settings.network.redacted())
    rule_of = _unanswered_rule_of(settings, operations)
    collector = FindingCollector(settings.secret_header_names, network=settings.network,
                                 rule_of=rule_of)
    live = Live(report, Tally(requests=lambda: guard.sent, budget=config.time_budget))
    report.begin(live.tally)
    report.message(f"seed {seed}: replay this run with --seed {seed}")
    schemas: list[GuardedOpenApiSchema] = []
    run = FuzzRun(settings=settings, rules=rules, caps=config.caps, operations=operations,
                  produced=_first_greedy(settings, config, guard, operations,
                                         _config(settings, config, seed, checks,
                                                 database=False)))
    search_db = (None if database is None else
                 ScopedDatabase(database, search_scope(settings.profile.name, config.mode)))
    with worker_crashes(result.errors):  # a worker that dies is an error, not a PASS
        try:
            if database is not None:
                _replay(database, _config(settings, config, seed, checks, database=False),
                        checks, guard, run, collector, live, schemas, rule_of)
            for document, phases in _passes(settings.profile.name, config.phases):
                left = None if config.time_budget is None else _search_left(
                    config.time_budget, time.monotonic() - started)
                if guard.spent or (left is not None and left < 1):
                    break
                st_config = _config(settings, replace(config, phases=phases, time_budget=left),
                                    seed, checks, database=search_db is not None)
                _run_pass(document, st_config, guard, run, result, collector, live, schemas,
                          database=search_db)
            # what the run cut short, before shrinking adds cuts of its own candidates
            collector.add_network(list(guard.network_failures))
            live.tally.findings = len(collector.findings())
            if config.shrink and not guard.spent:
                shrink_findings(settings, config.caps, guard, collector, live, rule_of)
        finally:
            for schema in schemas:
                detach(schema)
            report.end()
    result.findings = collector.findings()
    if database is not None:
        _keep_failures(database, settings.profile.name, result)
    result.judged = dict(run.judged)
    run.statuses.add_failures(failure for failure in guard.network_failures
                              if _valid_completion(failure, operations, settings))
    result.statuses = run.statuses.tally()
    result.ttft_seconds, result.itl_seconds = tuple(run.latency.ttft), tuple(run.latency.gaps)
    result.requests, result.retried = guard.sent, guard.retried
    result.duration = time.monotonic() - started
    result.unreachable = bool(guard.network_failures) and not guard_answered(guard) and all(
        not failure.connected for failure in guard.network_failures
    )
    if guard.spent and guard.stop_reason is not None:
        result.stop_reason = guard.stop_reason.replace("time budget", f"time budget of "
                                                       f"{limit:g} s")
    return result


def _first_greedy(settings: Settings, config: FuzzConfig, guard: RequestGuard,
                  operations: dict[str, str], st_config: SchemathesisConfig
                  ) -> Produced | None:
    """The run's first greedy exchange (:mod:`.produced`), sent through the guard; None when
    the profile has no completions operation or the request got no answer."""
    label = next((label for label, name in operations.items() if name == "completions"), None)
    if label is None or "fuzzing" not in config.phases:
        return None
    method, path = label.split(" ", 1)
    document = fuzz_document(settings.profile.name)
    schema = guard_schema(schemathesis.openapi.from_dict(document, config=st_config), guard)
    try:
        return ask(schema[path][method], settings, config.caps.max_tokens,
                   dict(settings.request_headers()))
    except (requests.RequestException, BudgetSpent):
        return None


def _valid_completion(failure: NetworkFailure, operations: dict[str, str],
                      settings: Settings) -> bool:
    """Whether ``failure`` was a valid request of the completions operation (its method the
    operation's, its body valid for the profile), as :attr:`.sample.Sample.valid` says of an
    answer."""
    if operations.get(failure.operation) != "completions":
        return False
    if failure.request.method.upper() != failure.operation.split(" ", 1)[0].upper():
        return False
    return classify(failure.request.json(), settings.profile).kind in ("valid", "ignorable")


def _search_left(budget: float, elapsed: float) -> float:
    """Seconds the search may still take of ``budget``, the shrinking's share put aside."""
    reserve = SHRINK_SHARE * budget if budget >= SHRINK_RESERVE_FROM else 0.0
    return budget - reserve - elapsed


def _unanswered_rule_of(settings: Settings, operations: dict[str, str]) -> RuleOf:
    """What a request that got no whole answer fails, judged by what it asked
    (:mod:`conformance.fuzz.unanswered`); nothing when schemathesis sent the operation's path
    another method (``POST /models``, ``OPTIONS /completions``): no rule covers those, as
    :func:`conformance.fuzz.checks.sample_of` leaves their answers unjudged."""
    def rule_of(failure: NetworkFailure) -> str | None:
        method = failure.operation.split(" ", 1)[0].upper()
        if failure.request.method.upper() != method:
            return None
        return unanswered_rule(failure.request, streamed=failure.streamed,
                               completions=operations.get(failure.operation) == "completions",
                               profile=settings.profile)
    return rule_of


def _passes(profile_name: str, phases: tuple[str, ...]
            ) -> list[tuple[dict[str, object], tuple[str, ...]]]:
    """The examples phase on the shipped document, the others on it without examples
    (:mod:`conformance.fuzz.document` says why)."""
    document = fuzz_document(profile_name)
    passes: list[tuple[dict[str, object], tuple[str, ...]]] = []
    if "examples" in phases:
        passes.append((document, ("examples",)))
    rest = tuple(phase for phase in phases if phase != "examples")
    if rest:
        passes.append((without_examples(document), rest))
    return passes


def _run_schema(document: dict[str, object], st_config: SchemathesisConfig,
                guard: RequestGuard, run: FuzzRun, schemas: list[GuardedOpenApiSchema]
                ) -> GuardedOpenApiSchema:
    """A schema of ``document`` whose requests go through ``guard``, judged for ``run``
    (attached, the hooks installed), added to ``schemas``, which the caller detaches."""
    schema = guard_schema(schemathesis.openapi.from_dict(document, config=st_config), guard)
    attach(schema, run)
    schemas.append(schema)
    install(schema)
    return schema


def _replay(database: ExampleDatabase, st_config: SchemathesisConfig, checks: list[str],
            guard: RequestGuard, run: FuzzRun, collector: FindingCollector, live: Live,
            schemas: list[GuardedOpenApiSchema], rule_of: RuleOf) -> None:
    """Send again the failures earlier runs kept that the run's ``checks`` judge
    (:mod:`conformance.fuzz.replay`)."""
    settings = run.settings
    stored = stored_failures(database, settings.profile.name, list(run.operations),
                             frozenset(checks))
    if not stored:
        return
    live.enter("replay")
    kept = f"{len(stored)} failure{'s' if len(stored) != 1 else ''} earlier runs kept"
    live.report.message(f"sending again the {kept}")
    schema = _run_schema(without_examples(fuzz_document(settings.profile.name)), st_config,
                         guard, run, schemas)
    friendli = settings.profile.wire == "friendli"
    replay = Replay(schema=schema, headers=dict(settings.request_headers()),
                    prepare=lambda body: cap(body, run.caps, friendli=friendli), guard=guard,
                    collector=collector, rule_of=rule_of)
    try:
        again = replay_failures(database, stored, replay)
    except BudgetSpent as spent:
        live.report.message(f"{spent} while replaying kept failures")
        return
    live.tally.findings = len(collector.findings())
    live.report.message(f"{again} of the {kept} failed again")


def _keep_failures(database: ExampleDatabase, profile_name: str, result: FuzzResult) -> None:
    """Save the run's findings for the next runs; a database that fails is a run error."""
    try:
        save_findings(database, profile_name, result.findings)
    except Exception as exc:  # any database's own errors (OSError, redis.RedisError, ...)
        result.errors.append(f"example database: {type(exc).__name__}: {exc}")


def _run_pass(document: dict[str, object], st_config: SchemathesisConfig, guard: RequestGuard,
              run: FuzzRun, result: FuzzResult, collector: FindingCollector, live: Live,
              schemas: list[GuardedOpenApiSchema], *, database: ExampleDatabase | None) -> None:
    """One engine run, its examples kept in ``database`` (None: none kept). Its schema stays
    attached to ``run`` (shrinking resends its cases)."""
    schema = _run_schema(document, st_config, guard, run, schemas)
    if database is not None:
        use_database(schema.config, database)
    stream = from_schema(schema).execute()
    guard.on_spent = stream.stop
    for event in stream:
        _on_event(event, result, collector, live)


def guard_answered(guard: RequestGuard) -> bool:
    """Whether any request got an answer (every attempt that did not fail on the network)."""
    return guard.sent > len(guard.network_failures)


def _on_event(event: events.EngineEvent, result: FuzzResult, collector: FindingCollector,
              live: Live) -> None:
    if (isinstance(event, events.PhaseStarted) and event.phase.is_enabled
            and event.phase.name.value in TESTING_PHASES):
        live.enter(event.phase.name.value)
    elif isinstance(event, events.ScenarioFinished):
        result.examples += len(event.recorder.cases)
        collector.add_scenario(event.recorder)
        live.tally.examples = result.examples
        live.tally.findings = len(collector.findings())
    elif isinstance(event, events.NonFatalError):
        if not _is_network(event.value):
            result.errors.append(f"{event.label}: {type(event.value).__name__}: {event.value}")
    elif isinstance(event, events.FatalError):
        result.errors.append(f"fatal: {type(event.exception).__name__}: {event.exception}")
    elif isinstance(event, events.EngineFinished):
        if event.stop_reason is not StopReason.COMPLETED:
            result.stop_reason = str(event.stop_reason.value)


def _is_network(error: BaseException) -> bool:
    import requests

    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, requests.RequestException):
            return True
        seen = seen.__cause__ or seen.__context__
    return type(error).__name__ in ("UnrecoverableNetworkError", "ServerWentAway")
