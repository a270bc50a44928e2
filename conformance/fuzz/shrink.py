"""Shrink each finding with hypothesis, from the request that showed it to the smallest one that
still does.

Schemathesis' engine reports the first failing case as found: its checks raise a
``FailureGroup``, a ``BaseExceptionGroup``, which hypothesis (6.170 here) does not count as a
test failure, so it never shrinks (schemathesis 4.32.5). So each finding is shrunk afterwards,
by hypothesis, over the *reductions* of its request body (:func:`reductions`: every object key
kept or dropped, every list and string cut to a prefix, every number kept or zeroed; the model
is never reduced, :data:`KEPT`, and stop strings are kept whole, :data:`WHOLE`). The
failing body is itself one reduction, the one where everything is kept. It goes into the
secondary corpus of an example database under the search's key
(``hypothesis.find(..., database_key=...)``), so hypothesis replays it first and then shrinks
it, resending each candidate (capped like every fuzz request) and running the one check that
failed. The last candidate that failed the same way is the reproduction.

A search is bounded by ``max_requests`` requests (and the run's budgets and guard still
apply: a spent time budget ends it too).
A finding that does not fail again when replayed, or whose body is not JSON, keeps the example
the engine found. A request that got no complete response (a stream cut short) is shrunk the
same way, to the smallest reduction the server still cuts short (:func:`shrink_cut`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

import hypothesis
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, Verbosity
from hypothesis import strategies as st
from hypothesis.database import InMemoryExampleDatabase, choices_to_bytes
from schemathesis.checks import CHECKS, CheckFunction, load_all_checks
from schemathesis.core.failures import Failure, FailureGroup

from spec import JSON

from .checks import RuleFailure
from .guard import BudgetSpent, NetworkFailure

SEARCH_KEY = b"conformance-fuzz-shrink"


def failure_key(check: str, failure: Failure) -> str:
    """How two failures of one check are told apart (the rule ID for catalog rules)."""
    if isinstance(failure, RuleFailure):
        return failure.rule_id
    return f"{check}:{type(failure).__name__}:{failure._unique_key}"


# -- the reductions of a body ---------------------------------------------------------------


WHOLE = ("stop",)
"""Top-level fields whose strings are dropped but never cut: a stop string was drawn from what
the server wrote (:mod:`.produced`), and a fragment of it would match elsewhere, or nowhere,
and make a reproduction that reads as noise."""


def _reduce(draw: st.DrawFn, value: JSON, *, whole: bool = False) -> JSON:
    if isinstance(value, dict):
        return {key: _reduce(draw, item, whole=key in WHOLE) for key, item in value.items()
                if draw(st.booleans())}
    if isinstance(value, list):
        keep = draw(st.integers(0, len(value))) if value else 0
        return [_reduce(draw, item, whole=whole) for item in value[:keep]]
    if isinstance(value, str):
        return value[: draw(st.integers(0, len(value)))] if value and not whole else value
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)) and value != 0:
        return value if draw(st.booleans()) else type(value)(0)
    return value


@st.composite
def reductions(draw: st.DrawFn, value: JSON) -> JSON:
    """Every way to make ``value`` smaller: keys dropped, lists and strings cut (stop strings
    only dropped, :data:`WHOLE`), numbers zeroed.

    Hypothesis shrinks towards dropping and cutting everything; :func:`choices_of` gives the
    choices that keep everything, i.e. ``value`` itself.
    """
    return _reduce(draw, value)


def choices_of(value: JSON, *, whole: bool = False) -> list[bool | int]:
    """The choices :func:`reductions` draws to produce ``value`` unchanged, in draw order."""
    if isinstance(value, dict):
        found: list[bool | int] = []
        for key, item in value.items():
            found.append(True)
            found += choices_of(item, whole=key in WHOLE)
        return found
    if isinstance(value, list):
        if not value:
            return []
        found = [len(value)]
        for item in value:
            found += choices_of(item, whole=whole)
        return found
    if isinstance(value, str):
        return [len(value)] if value and not whole else []
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, (int, float)) and value != 0:
        return [True]
    return []


KEPT = ("model",)
"""Top-level fields no reduction changes: they say what is tested, not what is asked. Cut to
"r", a model name turns any finding into an unknown-model answer (LiteLLM's 400) that "fails
the same way" and hides what really failed."""


def _kept(candidate: JSON, original: JSON) -> JSON:
    """``candidate`` with the original's :data:`KEPT` fields put back as they were."""
    if isinstance(candidate, dict) and isinstance(original, dict):
        for name in KEPT:
            if name in original:
                candidate[name] = copy.deepcopy(original[name])
    return candidate


# -- the search -------------------------------------------------------------------------------


@dataclass
class Best:
    """The smallest case that failed the same way so far, with its response and failure."""

    case: schemathesis.Case | None = None
    response: schemathesis.Response | None = None
    failure: Failure | None = None
    requests: int = 0


def _fresh_copy(case: schemathesis.Case) -> schemathesis.Case:
    """A copy of ``case`` to send again (``Case.derive`` exists from schemathesis 4.31; the
    releases Python 3.10 gets lack it: there, an equal case is built from the operation)."""
    derive = getattr(case, "derive", None)
    if derive is not None:
        return derive()  # type: ignore[no-any-return]
    return case.operation.Case(
        method=case.method, path_parameters=dict(case.path_parameters or {}),
        headers=dict(case.headers or {}), cookies=dict(case.cookies or {}),
        query=dict(case.query or {}), body=case.body, media_type=case.media_type,
    )


def shrink_case(case: schemathesis.Case, *, check: str, key: str, headers: dict[str, str],
                prepare: Callable[[JSON], JSON], max_requests: int = 120) -> Best:
    """The smallest reduction of ``case``'s body that still fails ``check`` with ``key``.

    ``prepare`` bounds each candidate before it is sent (the run's caps: dropping ``max_tokens``
    must not hand generation back to the server's default).
    """
    check_function = case_check(check)
    if check_function is None or not isinstance(case.body, (dict, list, str)):
        return Best()  # a run-level check, or a body with nothing to take away
    best = Best()

    def fails_the_same_way(candidate: schemathesis.Case) -> bool:
        failed = same_failure(candidate, check_function, check=check, key=key, headers=headers)
        if failed is None:
            return False
        best.case, (best.response, best.failure) = candidate, failed
        return True

    best.requests = _search(case, fails_the_same_way, prepare, max_requests)
    return best


def case_check(check: str) -> CheckFunction | None:
    """The registered check named ``check`` that judges one case; None for a run-level check
    (a class) or a name no check has."""
    load_all_checks()
    try:
        registered = CHECKS.get_one(check)
    except KeyError:
        return None
    return None if isinstance(registered, type) else registered


def same_failure(case: schemathesis.Case, check_function: CheckFunction, *, check: str,
                 key: str, headers: dict[str, str]
                 ) -> tuple[schemathesis.Response, Failure] | None:
    """Send ``case`` and judge its answer with ``check_function``: the response and the
    failure when it fails ``check`` with ``key`` (:func:`failure_key`), else None."""
    response = case.call(headers=headers)
    try:
        case.validate_response(response, checks=[check_function], headers=headers)
    except FailureGroup as group:
        failures: tuple[Failure, ...] = tuple(group.exceptions)
    except Failure as single:
        failures = (single,)
    else:
        return None
    for failure in failures:
        if failure_key(check, failure) == key:
            return response, failure
    return None


def shrink_cut(case: schemathesis.Case, *, kind: str, headers: dict[str, str],
               prepare: Callable[[JSON], JSON], recorded: list[NetworkFailure],
               max_requests: int = 120,
               same: Callable[[NetworkFailure], bool] = lambda cut: True,
               ) -> NetworkFailure | None:
    """The smallest reduction of ``case``, whose request got no complete response, that still
    gets none the same way (an exception of class ``kind``, and ``same`` holding: the same
    rule broken, so an invalid request never shrinks into a valid one); None when none did.

    ``recorded`` is the run guard's list of network failures, where each candidate's own
    failure lands (with the request as sent, for the reproduction).
    """
    if not isinstance(case.body, (dict, list, str)):
        return None
    smallest: list[NetworkFailure] = []

    def cut_the_same_way(candidate: schemathesis.Case) -> bool:
        seen = len(recorded)
        try:
            candidate.call(headers=headers)
        except requests.RequestException:
            for cut in recorded[seen:]:
                if cut.connected and cut.kind == kind and same(cut):
                    smallest.append(cut)
                    return True
        return False

    _search(case, cut_the_same_way, prepare, max_requests)
    return smallest[-1] if smallest else None


def _search(case: schemathesis.Case, fails: Callable[[schemathesis.Case], bool],
            prepare: Callable[[JSON], JSON], max_requests: int) -> int:
    """Let hypothesis reduce ``case``'s body, from the body itself, while ``fails`` holds for
    the candidate case (sent at most ``max_requests`` times); the requests sent."""
    sent = 0

    def candidate_fails(body: JSON) -> bool:
        nonlocal sent
        if sent >= max_requests:
            return False  # enough: decline further candidates, keep the best so far
        sent += 1
        candidate = _fresh_copy(case)
        candidate.body = prepare(_kept(copy.deepcopy(body), case.body))  # type: ignore[assignment]
        return fails(candidate)

    database = InMemoryExampleDatabase()
    # the secondary corpus: hypothesis replays it and shrinks what fails (an entry of the
    # primary corpus would count as shrunk already)
    database.save(SEARCH_KEY + b".secondary", choices_to_bytes(choices_of(case.body)))
    search_settings = hypothesis.settings(
        database=database, phases=[Phase.reuse, Phase.shrink], max_examples=1, deadline=None,
        verbosity=Verbosity.quiet, suppress_health_check=list(HealthCheck),
    )
    try:
        hypothesis.find(reductions(case.body), candidate_fails, settings=search_settings,
                        database_key=SEARCH_KEY)
    except BudgetSpent:
        raise
    except Exception:
        pass  # NoSuchExample (it did not fail again) or Flaky: the caller holds what was found
    return sent
