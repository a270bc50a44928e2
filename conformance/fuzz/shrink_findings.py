"""Shrinking a run's findings after the search, one after another, within its budget: each
finding's example is replaced by the smallest reduction that still fails the same way (the
reductions themselves are :mod:`conformance.fuzz.shrink`'s)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from conformance.run.settings import Settings

from .bodies import Caps, cap
from .findings import (
    CONNECTION,
    FindingCollector,
    RuleOf,
    connection_kind,
    network_finding,
    shrunk_finding,
)
from .guard import BudgetSpent, NetworkFailure, RequestGuard
from .progress import Live
from .shrink import shrink_case, shrink_cut

UNSHRUNK_KINDS = frozenset({"ResponseTooSlow"})
"""Cuts not shrunk: each candidate would cost the whole total time of a request."""

MAX_SHRUNK = 12
"""Findings shrunk per run, at most (each costs up to a few hundred requests)."""


def shrink_findings(settings: Settings, caps: Caps, guard: RequestGuard,
                     collector: FindingCollector, live: Live, rule_of: RuleOf) -> None:
    """Replace each finding's example with the smallest reduction that still fails the same
    way (see :mod:`conformance.fuzz.shrink`)."""
    say = live.report.message
    headers = dict(settings.request_headers())
    secret = settings.secret_header_names
    friendli = settings.profile.wire == "friendli"

    def prepare(body: object) -> object:
        return cap(body, caps, friendli=friendli)

    for finding in collector.findings()[:MAX_SHRUNK]:
        if finding.case is None or (finding.check == CONNECTION
                                    and connection_kind(finding.key) in UNSHRUNK_KINDS):
            continue
        live.enter("shrinking")
        say(f"shrinking {finding.key} on {finding.operation}")
        try:
            if finding.check == CONNECTION:
                cut = shrink_cut(finding.case, kind=connection_kind(finding.key),
                                 headers=headers, prepare=prepare,
                                 recorded=guard.network_failures,
                                 same=_same_rule(rule_of, finding.rule_id))
                if cut is not None:
                    smaller = network_finding(cut, secret, shrunk=True, rule_of=rule_of)
                    collector.replace(smaller if smaller.size <= finding.size
                                      else replace(finding, shrunk=True))
                continue
            best = shrink_case(finding.case, check=finding.check, key=finding.key,
                               headers=headers, prepare=prepare)
        except BudgetSpent as spent:
            say(f"{spent} while shrinking: the other findings stay as found")
            return
        if best.case is not None and best.response is not None and best.failure is not None:
            collector.replace(shrunk_finding(finding, best.case, best.response, best.failure,
                                             secret))


def _same_rule(rule_of: RuleOf, rule_id: str | None) -> Callable[[NetworkFailure], bool]:
    """Whether a shrinking candidate's cut breaks the finding's own rule."""
    return lambda cut: rule_of(cut) == rule_id
