"""One rule's own check on one exchange: what a fuzzed answer and a recorded one share.

:mod:`conformance.fuzz.checks` calls it for every fuzzed response, ``conformance judge``
(:mod:`conformance.judge`) for every recorded exchange: the exchange, filed by the rule's
binding (:mod:`.binders`) where the rule's check reads, is judged by that check and nothing
else, so the two never disagree about what a rule says. No schemathesis here.
"""

from __future__ import annotations

from typing import NamedTuple

from conformance.contract.validity import classify
from conformance.model import HarnessProblem, NotApplicable, Rule, Violation
from conformance.run.check_context import CheckContext
from conformance.run.settings import Settings
from conformance.transport import Exchange
from conformance.views import StreamView

from .binders import Outcomes, binder_for
from .sample import Sample


class Reading(NamedTuple):
    """What one check made of one exchange: its violation (or None), and whether it read an
    answer at all (a rule that read none SKIPs, never PASSes)."""

    violation: Violation | None
    judged: bool


UNREAD = Reading(None, False)


def sample_of_exchange(operation: str, exchange: Exchange, settings: Settings) -> Sample:
    """``exchange`` as a :class:`Sample`: its request body (JSON, else the text), what the
    contract makes of it under the profile, and a successful stream parsed once."""
    body = exchange.request.json() if exchange.request.body else None
    if exchange.request.body and body is None:
        body = exchange.request.body.decode("utf-8", "replace")
    sample = Sample(operation, body, classify(body, settings.profile), exchange)
    if exchange.is_sse and exchange.status == 200:
        sample.views[id(exchange)] = StreamView(exchange)
    return sample


def read(rule: Rule, settings: Settings, sample: Sample,
         outcomes: Outcomes | None = None) -> Reading:
    """Run ``rule``'s own check on ``sample``, filed by the rule's binding (or as
    ``outcomes`` says, when given). Refused requests are left unjudged (``judge_refusals``
    False): whether a request should have been accepted is not one exchange's to say."""
    if outcomes is None:
        binder = binder_for(rule)
        outcomes = binder(sample) if binder is not None else None
    if outcomes is None:
        return UNREAD
    context = CheckContext(rule, settings, outcomes, sample.views, judge_refusals=False)
    try:
        rule.check(context)
    except Violation as violation:
        return Reading(detached(violation), True)
    except HarnessProblem:
        return UNREAD
    except NotApplicable:
        pass  # a rule bound to two exchanges finds one of them only: what it read, it judged
    return Reading(None, bool(context.judged))


def detached(violation: Violation) -> Violation:
    """``violation`` without the frames it holds, its further cases' frames included.

    A failure is kept until its scenario ends (hundreds of cases in the coverage phase). Its
    traceback, and the traceback of an exception it was raised while handling
    (``__context__``), hold the check's frames and with them the context, its parsed views and
    the whole exchange: against a flood of 512 KB events that kept several 16 MiB responses.
    """
    for each in (violation, *violation.also):
        each.__traceback__ = None
        each.__context__ = each.__cause__ = None
    return violation
