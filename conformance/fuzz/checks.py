"""The catalog's rules as schemathesis checks: the same check functions, one exchange at a time.

Each rule a fuzzed exchange can judge (:mod:`conformance.bindings.binders`) is registered
once, at import, as a schemathesis check named by its rule ID. The registered function adapts:
it turns the schemathesis response into an :class:`~conformance.transport.Exchange` (once per
response, shared by every rule), files it where the rule's check reads, builds a
:class:`~conformance.run.check_context.CheckContext` and calls ``rule.check`` itself. A
:class:`~conformance.model.Violation` becomes a :class:`RuleFailure`; NotApplicable and
HarnessProblem mean "nothing to judge here" (the run's own state knows why).

A check does nothing unless its schema belongs to a fuzz run (:func:`attach`), so registering
globally is harmless to other schemathesis users in the same process.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import schemathesis
from hypothesis import strategies as st
from schemathesis.core.failures import Failure, Severity

from conformance.bindings.binders import binder_for
from conformance.bindings.reading import read, sample_of_exchange
from conformance.bindings.sample import Sample
from conformance.model import Level, Rule, Violation
from conformance.rules import CATALOG
from conformance.run.latency import Latency, chunk_times
from conformance.run.settings import Settings
from conformance.strategies import (
    completion_requests,
    independent_samples,
    repeat_bans,
    scored_echoes,
    stop_requests,
)
from conformance.views import compact
from spec import JSON

from .answered import Statuses
from .bodies import Caps
from .exchange import to_exchange
from .memo import remembered
from .produced import Produced


class RuleFailure(Failure):
    """A catalog rule broken by one fuzzed response."""

    code = "ST901"
    kind_title = "Conformance rule violated"

    def __init__(self, rule: Rule, violation: Violation, *, operation: str) -> None:
        super().__init__(
            operation=operation,
            title=f"{rule.id} {rule.title}",
            message=describe(rule, violation),
            severity=_severity(rule),
        )
        self.rule_id = rule.id
        self.violation = violation

    @property
    def _unique_key(self) -> str:
        # one finding per rule and operation, however its message varies between examples
        return self.rule_id


def _severity(rule: Rule) -> Severity:
    """A broken MUST weighs like a schema violation; a broken SHOULD like a header problem."""
    return Severity("high" if rule.level is Level.MUST else "medium")


def describe(rule: Rule, violation: Violation) -> str:
    """The failure text: what broke, Expected / Actual / Path / Evidence, and the requirement."""
    lines = [violation.message]
    if violation.expected is not None:
        lines.append(f"Expected: {compact(violation.expected)}")
    if violation.actual is not None:
        lines.append(f"Actual: {compact(violation.actual)}")
    if violation.path:
        lines.append(f"Path: {violation.path}")
    if violation.evidence:
        lines.append(f"Evidence: {violation.evidence[:400]}")
    lines.append(f"Requirement ({rule.level}): {rule.requirement}")
    lines.append(f"Citation: {rule.citation}")
    return "\n".join(lines)


@dataclass
class FuzzRun:
    """What the checks and hooks of one run need; attached to its schemathesis schema."""

    settings: Settings
    rules: tuple[Rule, ...]
    caps: Caps
    operations: dict[str, str] = field(default_factory=dict)
    """Schemathesis operation label -> profile operation name (``completions``, ``models``)."""
    produced: Produced | None = None
    """The run's first greedy exchange (:mod:`.produced`): stop strings are drawn from it."""
    overlay: st.SearchStrategy[dict[str, JSON]] = field(init=False, repr=False)
    focused: st.SearchStrategy[dict[str, JSON]] = field(init=False, repr=False)
    """Whole bodies aimed at stop strings, n samples, repeat bans and scored echoes
    (:mod:`conformance.strategies.focused`), sent instead of a generated valid body now and
    then (:func:`.hooks.flatmap_body`)."""
    rule_ids: frozenset[str] = field(init=False, repr=False)
    latency: Latency = field(default_factory=Latency)
    """The streams' times to first token and inter-token gaps, for the reports' charts."""
    judged: dict[str, int] = field(default_factory=dict)
    """Rule ID -> answers its check judged (read at least one of): a rule that judged none
    SKIPs, never PASSes on nothing."""
    statuses: Statuses = field(default_factory=Statuses)
    """The statuses of the valid completion requests' answers (:mod:`.answered`): whether the
    run can judge at all."""
    _judged_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def count_judged(self, rule: Rule) -> None:
        with self._judged_lock:
            self.judged[rule.id] = self.judged.get(rule.id, 0) + 1

    def __post_init__(self) -> None:
        self.rule_ids = frozenset(rule.id for rule in self.rules)
        caps, profile, model = self.caps, self.settings.profile, self.settings.model
        texts = self.produced.texts if self.produced is not None else ()
        self.overlay = completion_requests(
            profile, model=model, max_tokens=caps.max_tokens, max_n=caps.max_n,
            max_prompts=caps.max_prompts, texts=texts,
        )
        known = self.produced if self.produced is not None and texts else None
        self.focused = st.one_of(
            stop_requests(profile, model=model, max_tokens=caps.max_tokens, texts=texts,
                          prompt=known.prompt if known else None,
                          prompt_field=known.field if known else "prompt"),
            independent_samples(profile, model=model, max_tokens=caps.max_tokens,
                                max_n=caps.max_n),
            repeat_bans(profile, model=model, max_tokens=caps.max_tokens,
                        prompt=known.prompt if known else None,
                        prompt_field=known.field if known else "prompt"),
            scored_echoes(profile, model=model, max_tokens=caps.max_tokens),
        )

    @property
    def secret_headers(self) -> tuple[str, ...]:
        return self.settings.secret_header_names


_RUNS: dict[int, FuzzRun] = {}
_LOCK = threading.Lock()


def attach(schema: object, run: FuzzRun) -> None:
    with _LOCK:
        _RUNS[id(schema)] = run


def detach(schema: object) -> None:
    with _LOCK:
        _RUNS.pop(id(schema), None)


def run_for(schema: object) -> FuzzRun | None:
    return _RUNS.get(id(schema))


def run_of(case: schemathesis.Case) -> FuzzRun | None:
    return _RUNS.get(id(case.operation.schema))


def sample_of(run: FuzzRun, response: schemathesis.Response, case: schemathesis.Case
              ) -> Sample | None:
    """The response as a :class:`Sample`, built once per response (:mod:`.memo`)."""
    operation = run.operations.get(case.operation.label)
    if operation is None:
        return None
    sent = getattr(response.request, "method", None) or case.method
    if sent.upper() != case.operation.method.upper():
        return None  # schemathesis' probe of another method (OPTIONS, ...): no rule covers it

    def make() -> Sample:
        exchange = to_exchange(response, secret_headers=run.secret_headers)
        sample = sample_of_exchange(operation, exchange, run.settings)
        if sample.valid:
            run.statuses.add(exchange.status, exchange)
        view = sample.views.get(id(exchange))
        if view is not None:  # parsed once, for latency and checks
            run.latency.add(chunk_times(exchange, view))
        return sample

    return remembered(response, f"sample {id(run)}", make)


def judge(rule: Rule, run: FuzzRun, sample: Sample) -> Violation | None:
    """Run ``rule``'s own check on one sample (:func:`.reading.read`); the violation, or None."""
    violation, judged = read(rule, run.settings, sample)
    if judged:
        run.count_judged(rule)
    return violation


def _as_check(rule: Rule) -> schemathesis.CheckFunction:
    def check(ctx: schemathesis.CheckContext, response: schemathesis.Response,
              case: schemathesis.Case) -> bool | None:
        run = run_of(case)
        if run is None or rule.id not in run.rule_ids:
            return None
        sample = sample_of(run, response, case)
        if sample is None:
            return None
        violation = judge(rule, run, sample)
        if violation is None:
            return None
        failure = RuleFailure(rule, violation, operation=case.operation.label)
        # schemathesis keeps a failure, traceback and all, until its scenario ends: this frame
        # must not keep the response or its parsed exchange (16 MiB streams, several times over)
        del sample, response, ctx
        raise failure

    check.__name__ = rule.id
    check.__qualname__ = rule.id
    check.__doc__ = f"{rule.id} ({rule.level}): {rule.requirement}"
    return check


def fuzzable(rule: Rule) -> bool:
    """Whether one fuzzed exchange can judge ``rule``."""
    return binder_for(rule) is not None


FUZZABLE: tuple[Rule, ...] = tuple(rule for rule in CATALOG if fuzzable(rule))
"""Every rule registered as a schemathesis check, in catalog order."""

for _rule in FUZZABLE:
    schemathesis.check(_as_check(_rule))


def select_rules(settings: Settings, *, strict: bool, select: list[str] | None = None,
                 deselect: list[str] | None = None) -> tuple[Rule, ...]:
    """The fuzzable rules of the profile whose features are claimed: MUST rules, and SHOULD
    rules too under ``strict`` (a broken SHOULD then counts, as ``run --strict`` counts it)."""
    chosen = CATALOG.select(profile=settings.profile, select=select or (),
                            deselect=deselect or ())
    return tuple(
        rule for rule in chosen
        if fuzzable(rule)
        and all(settings.claims(feature) for feature in rule.features)
        and (strict or rule.level is Level.MUST)
    )
