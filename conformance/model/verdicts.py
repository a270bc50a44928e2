"""The vocabulary of a conformance run: requirement levels, verdicts and source kinds.

Levels follow RFC 2119 as h2spec and Autobahn use them: a broken MUST is a FAIL, a broken
SHOULD a NON_STRICT (a FAIL only under ``--strict``), and a MAY is informational. Verdicts are
graded like Autobahn's (OK / NON-STRICT / FAILED / UNIMPLEMENTED), plus ERROR for a run the
harness itself could not complete.
"""

from __future__ import annotations

import enum


class Level(str, enum.Enum):
    """How binding a rule is (RFC 2119)."""

    MUST = "MUST"
    SHOULD = "SHOULD"
    MAY = "MAY"

    def __str__(self) -> str:
        return self.value

    @property
    def marker(self) -> str:
        """The pytest marker of a rule item of this level (``-m conformance_must``)."""
        return f"conformance_{self.value.lower()}"


class Verdict(str, enum.Enum):
    """The outcome of one rule against one server.

    PASS: the requirement held. FAIL: a MUST was broken. NON_STRICT: a SHOULD (or MAY) was
    broken. SKIP: the rule does not apply (the server does not claim the feature, a probe was
    not run, or another defect made its precondition false). ERROR: the harness or the
    connection broke, so nothing can be said.
    """

    PASS = "PASS"
    FAIL = "FAIL"
    NON_STRICT = "NON_STRICT"
    SKIP = "SKIP"
    ERROR = "ERROR"

    def __str__(self) -> str:
        return self.value

    def fails(self, *, strict: bool = False) -> bool:
        """Whether this verdict makes the run fail (exit status 1)."""
        if self in (Verdict.FAIL, Verdict.ERROR):
            return True
        return strict and self is Verdict.NON_STRICT


VERDICT_ORDER: tuple[Verdict, ...] = (
    Verdict.PASS,
    Verdict.FAIL,
    Verdict.NON_STRICT,
    Verdict.SKIP,
    Verdict.ERROR,
)
"""The order reporters list verdicts in."""


class SourceKind(str, enum.Enum):
    """Where a rule's requirement comes from."""

    SPEC = "spec"
    """The contract in ``spec/`` (which restates the upstream documents)."""
    API_REFERENCE = "api-reference"
    """A vendor's API reference or OpenAPI document (OpenAI, FriendliAI)."""
    WHATWG = "whatwg"
    """The WHATWG HTML standard, section 9.2 (server-sent events)."""
    OBSERVED = "observed"
    """Behaviour observed on the reference service, or in the bug classes of real servers."""

    def __str__(self) -> str:
        return self.value
