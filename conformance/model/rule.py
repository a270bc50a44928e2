"""Rules are records: an ID, a level, the requirement in one sentence, its source, and a check.

A check is a pure function of the recorded exchanges (a
:data:`~conformance.run.check_context.Check`, beside the context it reads: the model names no
module above it). It returns ``None`` when the requirement
holds, raises :class:`Violation` when it does not (an umbrella rule over many cases raises
every failing case at once with :func:`fail_each`, so a user fixing one sees the others), and
raises :class:`NotApplicable` when the rule cannot be judged (a feature is not claimed, or
another defect, judged by another rule, makes its precondition false). Any other exception is
a bug in the harness and becomes an ERROR verdict.

Exceptions::

    ConformanceSignal
     +-- Violation        the requirement is broken (FAIL / NON_STRICT)
     +-- NotApplicable    the rule does not apply (SKIP)
     +-- HarnessProblem   the harness could not record what the rule needs (ERROR)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import spec
from spec import JSON

from .verdicts import Level, SourceKind

RULE_ID = re.compile(r"^[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*-\d{3}$")
"""``AREA-NNN``: an upper-case area, a dash, three digits (``SSE-004``, ``CONTENT-TYPE-001``)."""

class ConformanceSignal(Exception):
    """Base of what a check may raise."""


class Violation(ConformanceSignal):
    """The requirement is broken.

    ``path`` is a JSON path into the offending document (``choices[1].finish_reason``);
    ``evidence`` the raw line or chunk that shows it; ``exchange`` names the recorded exchange
    (``probe/key``) it comes from, so reporters can show it and a curl command.
    """

    def __init__(
        self,
        message: str,
        *,
        expected: JSON = None,
        actual: JSON = None,
        path: str | None = None,
        evidence: str | None = None,
        exchange: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.expected = expected
        self.actual = actual
        self.path = path
        self.evidence = evidence
        self.exchange = exchange
        self.also: tuple[Violation, ...] = ()
        """The rule's further failing cases (:func:`fail_each`), each a finding of its own."""


def fail_each(violations: Sequence[Violation]) -> None:
    """Raise the first of ``violations`` carrying the others, if there are any: one finding per
    failing case of an umbrella rule (ERRORS-001 over every invalid input, ...)."""
    if violations:
        first = violations[0]
        first.also = tuple(violations[1:])
        raise first


class NotApplicable(ConformanceSignal):
    """The rule cannot be judged here; the message says why (shown with the SKIP)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class HarnessProblem(ConformanceSignal):
    """A probe the rule needs failed for reasons that are not the server's fault to judge
    (connection refused, request budget exhausted, harness limits); the verdict is ERROR."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Rule:
    """One requirement of the catalog.

    ``probes`` are the named requests whose exchanges the check reads (the runner runs only
    the probes the selected rules need); ``scan`` rules also read every other probe that ran.
    ``traits`` select the profiles the rule belongs to by what they are (``wire=openai``,
    ``unknown_fields=reject``; see :meth:`spec.Profile.traits`), never by name.
    ``features`` must all be claimed, else the rule is SKIPped. ``faults`` name the mock faults
    that must make this rule fail (the proof tests hold the catalog to it).
    """

    id: str
    level: Level
    title: str
    requirement: str
    citation: str
    source: SourceKind
    check: Callable[[Any], None] = field(repr=False, compare=False)
    """The check, called with the rule's :class:`~conformance.run.check_context.CheckContext`."""
    probes: tuple[str, ...] = ()
    traits: tuple[str, ...] = ()
    features: tuple[str, ...] = ()
    faults: tuple[str, ...] = ()
    scan: bool = False
    fuzz: str | None = None

    def __post_init__(self) -> None:
        if not RULE_ID.match(self.id):
            raise ValueError(f"rule id {self.id!r} is not AREA-NNN")
        unknown = set(self.traits) - spec.all_traits()
        if unknown:
            raise ValueError(f"rule {self.id}: no profile has the traits {sorted(unknown)}")
        for name in ("title", "requirement", "citation"):
            if not getattr(self, name).strip():
                raise ValueError(f"rule {self.id}: empty {name}")

    @property
    def area(self) -> str:
        """The ID without its number: ``CONTENT-TYPE-001`` -> ``CONTENT-TYPE``."""
        return self.id.rsplit("-", 1)[0]

    def applies_to(self, profile: spec.Profile) -> bool:
        """Whether the rule belongs to ``profile`` (by its traits, never by its name)."""
        return profile.has_traits(self.traits)
