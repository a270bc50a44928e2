"""A fuzz run in the result model every reporter reads (:class:`~conformance.model.RunResult`).

One :class:`~conformance.model.RuleResult` per check the run judged with: a catalog rule (by
its ID) or one of schemathesis' checks (its ``FUZZ-NNN`` record in
:mod:`conformance.rules.schemathesis_checks`), FAIL with one finding per defect found, PASS
when none was. A request that got no whole answer is judged by what it asked, as in
``conformance run``: a valid one is SSE-008's (a stream) or ERRORS-008's finding, an invalid
one its invalid-input rule's (ERRORS-001 for a malformed body; :mod:`.unanswered`). Each
finding's request is recorded as an exchange (``fuzz/N: POST /completions, negative data,
HTTP 500, shrunk``), so the JSON report holds it as a run's report holds its probes' requests.
The seed and the run's extent go in :class:`~conformance.model.Search`, so the reports say how
to replay it.
"""

from __future__ import annotations

from conformance.model import (
    Finding,
    Level,
    Rule,
    RuleResult,
    RunResult,
    RunStats,
    Search,
    Target,
    Verdict,
)
from conformance.rules import CATALOG, FUZZ_CHECKS
from conformance.rules.schemathesis_checks import BY_CHECK
from conformance.run.settings import Settings
from conformance.transport import Exchange, Termination, Timings

from .config import FuzzResult
from .findings import EXCERPT_BYTES, FuzzFinding


def rule_of(check: str) -> Rule:
    """The rule record of a check the fuzzer ran: a catalog rule ID or a schemathesis check."""
    return FUZZ_CHECKS.get(BY_CHECK[check]) if check in BY_CHECK else CATALOG.get(check)


def _where(finding: FuzzFinding) -> str:
    """The operation and how the request came to be: ``POST /completions, negative data,
    HTTP 500, shrunk``."""
    tags = [finding.operation]
    if finding.mode:
        tags.append(f"{finding.mode} data")
    if finding.status is not None:
        tags.append(f"HTTP {finding.status}")
    tags.append("shrunk" if finding.shrunk else "as found")
    return ", ".join(tag for tag in tags if tag)


def exchange_of(finding: FuzzFinding) -> Exchange:
    """The finding's request and the start of its answer, recorded as the run records one (the
    fuzzer keeps no more of the answer than :data:`~conformance.fuzz.findings.EXCERPT_BYTES`)."""
    excerpt = finding.response_excerpt.encode()
    return Exchange(
        request=finding.request,
        termination=Termination.EOF if finding.status is not None
        else Termination.CONNECTION_ERROR,
        timings=Timings(0.0), status=finding.status, body=excerpt, bytes_received=len(excerpt),
        body_truncated=len(excerpt) >= EXCERPT_BYTES,
        error=None if finding.status is not None else finding.message,
    )


def finding_of(finding: FuzzFinding, label: str) -> Finding:
    """What the reports show of one fuzz finding, its exchange recorded under ``label``: the
    rule's own violation when a catalog rule found it, else schemathesis' text with the
    response's start as evidence."""
    violation = finding.violation
    if violation is not None:
        return Finding(violation.message, violation.expected, violation.actual, violation.path,
                       violation.evidence, label, finding.curl)
    details = "; ".join(line.strip() for line in finding.message.splitlines() if line.strip())
    message = f"{finding.title}: {details}" if details else finding.title
    return Finding(message, evidence=finding.response_excerpt or None, exchange=label,
                   curl=finding.curl)


def _rule_id(finding: FuzzFinding) -> str:
    return finding.rule_id or BY_CHECK[finding.check]


def _unjudged(result: FuzzResult, rule_id: str) -> str | None:
    """Why a rule with no finding judged nothing, or None when it judged something: a PASS
    on nothing would be a lie (a server whose every answer the checks could not read passed
    them all). Schemathesis' own checks judge every example; a catalog rule the answers it
    could read (:attr:`~conformance.fuzz.config.FuzzResult.judged`)."""
    if rule_id in BY_CHECK.values():
        if result.examples:
            return None
        return f"no example was judged ({result.requests} requests sent)"
    if result.judged.get(rule_id):
        return None
    return (f"none of the {result.examples} examples gave it an answer to judge (more "
            f"--max-examples or a longer --time-budget may reach one)")


def run_result(result: FuzzResult, settings: Settings, *, strict: bool = False,
               embedded: bool = False) -> RunResult:
    """``result`` as a :class:`RunResult`: one rule result per check, findings grouped."""
    found: dict[str, list[Finding]] = {}
    exchanges: dict[str, Exchange] = {}
    for number, finding in enumerate(result.findings, 1):
        label = f"fuzz/{number}: {_where(finding)}"
        exchanges[label] = exchange_of(finding)
        found.setdefault(_rule_id(finding), []).append(finding_of(finding, label))
    rules = {rule.id: rule for rule in map(rule_of, result.checks)}
    for rule_id in found:  # a connection finding's rule may not be one the run judged with
        if rule_id not in rules:
            rules[rule_id] = CATALOG.get(rule_id)
    results = []
    for rule_id, rule in rules.items():
        cases = found.get(rule_id, [])
        if not cases:
            unjudged = _unjudged(result, rule_id)
            results.append(RuleResult(rule, Verdict.SKIP, unjudged) if unjudged
                           else RuleResult(rule, Verdict.PASS))
            continue
        verdict = Verdict.FAIL if rule.level is Level.MUST else Verdict.NON_STRICT
        message = cases[0].message.splitlines()[0]
        if len(cases) > 1:
            message = f"{len(cases)} findings; the first: {message}"
        results.append(RuleResult(rule, verdict, message, cases[0], more=tuple(cases[1:])))
    target = Target(result.base_url, result.profile_name, settings.model,
                    tuple(sorted(settings.features)), embedded=embedded)
    return RunResult(
        target=target,
        results=tuple(results),
        exchanges=exchanges,
        stats=RunStats(requests=result.requests, wall_seconds=result.duration,
                       ttft_seconds=result.ttft_seconds, itl_seconds=result.itl_seconds),
        strict=strict,
        search=Search(seed=result.seed, examples=result.examples, retried=result.retried,
                      stop_reason=result.stop_reason, errors=tuple(result.errors)),
    )
