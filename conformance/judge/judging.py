"""Recorded exchanges judged one by one by every rule one exchange can judge.

The rules and their placing are the fuzzer's (:mod:`conformance.bindings.binders`,
:func:`conformance.bindings.reading.read`): the request's own body decides where an exchange is
filed (streamed or not, ``n``, ``echo``, ``logprobs``, stop strings), and the rule's own check
judges it. A valid request the server answered with an error (4xx / 5xx) is judged only as a
refusal: its error body and Content-Type (the rules of the ``invalid`` binding, which judge a
case of kind :data:`~conformance.rules.errors.REFUSED` as any error), never by a content rule,
which could only pass it. A request the contract rejects is judged as fuzz judges one (the
profile's 4xx, the error envelope). Answers about the caller (401, 403, 413, 429, 503) are
not judged.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from conformance.bindings.binders import Outcomes, binder_for
from conformance.bindings.reading import read, sample_of_exchange
from conformance.bindings.sample import NOT_JUDGED_STATUSES, Sample
from conformance.model import Finding, Level, Rule, RuleResult, Verdict, Violation
from conformance.model.coverage import NOT_CLAIMED
from conformance.probes.model import ProbeOutcome
from conformance.rules.errors import REFUSED
from conformance.run.settings import Settings
from conformance.transport import Exchange, to_curl

from .recordings.recorded import Recorded, Unjudgeable, exchange_of

COMPLETIONS_PATHS = ("/v1/completions", "/dedicated/v1/completions")
"""The completions operation's paths (OpenAI's, FriendliAI's dedicated endpoints)."""
KEPT_FINDINGS = 20
"""Failing exchanges a report lists per rule; the rest are counted (a day of traffic can
repeat one defect a hundred thousand times)."""
NOT_COMPLETIONS = frozenset({"models-list"})
"""Bindings of rules about other operations than completions (``GET /models``): a recording's
other paths are not judged, so these rules are left out."""
ERROR_SHAPE = "invalid"
"""The binding of the rules that judge an error answer: its status, envelope, Content-Type."""


def _refused(sample: Sample) -> Outcomes:
    """A valid request answered with an error, as a case of the ``invalid`` probe of kind
    :data:`REFUSED`: only the rules about every error body read it."""
    case = {"kind": REFUSED, "why": "a valid request answered with an error",
            "stream": sample.streamed}
    outcome = ProbeOutcome("invalid", exchanges={"case": sample.exchange},
                           requests={"case": sample.body}, notes={"cases": {"case": case}},
                           invalid={"case"})
    return {"invalid": outcome}


@dataclass
class Judge:
    """The verdicts so far over every exchange given to :meth:`add`."""

    settings: Settings
    rules: tuple[Rule, ...]
    paths: tuple[str, ...] = COMPLETIONS_PATHS
    judged: Counter[str] = field(default_factory=Counter)
    failed: Counter[str] = field(default_factory=Counter)
    findings: dict[str, list[Finding]] = field(default_factory=dict)
    exchanges: dict[str, Exchange] = field(default_factory=dict)
    other_paths: Counter[str] = field(default_factory=Counter)
    unjudgeable: list[str] = field(default_factory=list)
    not_judged: Counter[int] = field(default_factory=Counter)
    """Completions exchanges left unjudged by their status (the caller's, or a non-200 2xx /
    3xx): status -> count."""
    completions: int = 0
    """Completions exchanges read (judged or not)."""
    models: Counter[str] = field(default_factory=Counter)

    @property
    def judged_exchanges(self) -> int:
        return self.completions - len(self.unjudgeable) - sum(self.not_judged.values())

    def picks(self, recorded: Recorded) -> bool:
        """Whether ``recorded`` is a completions request (counting it among the others if
        not)."""
        try:
            path = urlsplit(recorded.url).path.rstrip("/") or "/"
        except ValueError:  # http://[not-an-address/...
            path = "(a URL that does not parse)"
        method = recorded.method.upper()
        if method == "POST" and path in self.paths:
            return True
        self.other_paths[path if method == "POST" else f"{method} {path}"] += 1
        return False

    def add(self, recorded: Recorded) -> None:
        """Judge one recorded exchange by every rule that can read it."""
        if not self.picks(recorded):
            return
        self.completions += 1
        try:
            exchange = exchange_of(recorded)
        except Unjudgeable as why:
            self.unjudgeable.append(f"{recorded.label}: {why}")
            return
        sample = self._sample(exchange)
        model = sample.request.get("model")
        if isinstance(model, str):
            self.models[model] += 1
        status = exchange.status or 0
        if status in NOT_JUDGED_STATUSES or (sample.valid and status != 200 and status < 400):
            self.not_judged[status] += 1
            return
        refused = sample.valid and status >= 400
        for rule in self.rules:
            if refused and rule.fuzz != ERROR_SHAPE:
                continue  # a refusal says nothing of what a content rule requires
            binder = binder_for(rule)
            outcomes = (_refused(sample) if refused
                        else binder(sample) if binder is not None else None)
            if outcomes is None:
                continue
            violation, judged = read(rule, self.settings, sample, outcomes)
            if judged:
                self.judged[rule.id] += 1
            if violation is not None:
                self._keep(rule, violation, recorded, exchange, outcomes)

    def _sample(self, exchange: Exchange) -> Sample:
        return sample_of_exchange("completions", exchange, self.settings)

    def _keep(self, rule: Rule, violation: Violation, recorded: Recorded, exchange: Exchange,
              outcomes: Outcomes) -> None:
        self.failed[rule.id] += 1
        kept = self.findings.setdefault(rule.id, [])
        if len(kept) >= KEPT_FINDINGS:
            return
        label = recorded.label
        filed = [f"{name}/{key}" for name, outcome in outcomes.items()
                 for key in outcome.exchanges]
        for each in (violation, *violation.also):
            kept.append(Finding(_relabelled(each.message, filed, label), each.expected,
                                each.actual, each.path, each.evidence, label,
                                to_curl(exchange)))
        self.exchanges[label] = exchange

    def results(self, unclaimed: Iterable[Rule] = ()) -> tuple[RuleResult, ...]:
        """One result per rule: FAIL (NON_STRICT for a SHOULD) with its findings, PASS when it
        judged an exchange and none failed, else SKIP saying why."""
        out = []
        for rule in self.rules:
            found = self.findings.get(rule.id, [])
            if found:
                verdict = Verdict.FAIL if rule.level is Level.MUST else Verdict.NON_STRICT
                count = self.failed[rule.id]
                message = found[0].message.splitlines()[0]
                if count > 1:
                    listed = (f"; the first {len(found)} are listed" if count > len(found)
                              else "")
                    message = f"{count} recorded exchanges fail it{listed}; the first: {message}"
                out.append(RuleResult(rule, verdict, message, found[0], more=tuple(found[1:])))
            elif self.judged[rule.id]:
                out.append(RuleResult(rule, Verdict.PASS,
                                      f"{self.judged[rule.id]} recorded exchanges judged"))
            else:
                out.append(RuleResult(rule, Verdict.SKIP, self._why_unjudged(rule)))
        for rule in unclaimed:
            out.append(RuleResult(rule, Verdict.SKIP,
                                  f"{NOT_CLAIMED}: {', '.join(rule.features)}"))
        return tuple(out)

    def _why_unjudged(self, rule: Rule) -> str:
        shape = "any valid completion" if rule.scan else f"the {rule.fuzz!r} binding"
        return (f"precondition not met: none of the {self.judged_exchanges} judged recorded "
                f"exchanges has the shape it reads ({shape}: see conformance/bindings/binders.py)")

    def notes(self) -> list[str]:
        """What was not judged, each kind in one line."""
        lines = []
        if self.other_paths:
            total = sum(self.other_paths.values())
            listed = ", ".join(f"{path} ({count})" for path, count in
                               self.other_paths.most_common(8))
            more = "" if len(self.other_paths) <= 8 else f", and {len(self.other_paths) - 8} more"
            lines.append(f"skipped {total} exchange{'s' if total != 1 else ''} of other paths: "
                         f"{listed}{more} (--path PATH adds a gateway's own)")
        if self.not_judged:
            total = sum(self.not_judged.values())
            statuses = ", ".join(f"HTTP {status or 'none'} ({count})"
                                 for status, count in sorted(self.not_judged.items()))
            lines.append(f"not judged: {total} completions exchanges answered {statuses} "
                         "(refused as a whole, or not a 200)")
        if self.unjudgeable:
            total = len(self.unjudgeable)
            shown = "; ".join(self.unjudgeable[:5])
            more = f"; and {total - 5} more" if total > 5 else ""
            lines.append(f"skipped {total} recorded exchange{'s' if total != 1 else ''} that "
                         f"cannot be judged: {shown}{more}")
        return lines


def _relabelled(message: str, filed: list[str], label: str) -> str:
    """A check's message names the probe the exchange was filed under (``greedy/s: ...``):
    name the recording instead."""
    for name in filed:
        message = message.replace(name, label)
    return message
