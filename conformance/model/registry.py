"""A registry of rules that refuses duplicate IDs, in the manner of schemathesis' check registry.

Rules register themselves with the :meth:`Registry.rule` decorator at import time; a second rule
with an ID already taken is a ``ValueError`` then, not a silent override.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Container, Iterable, Iterator
from typing import Any, TypeVar

import spec

from .rule import Rule
from .verdicts import Level, SourceKind

CheckT = TypeVar("CheckT", bound=Callable[[Any], None])


class Registry:
    """An ordered set of rules keyed by ID.

    ``fuzz_bindings``, when given, are the names a rule's ``fuzz`` may take: a rule naming
    another is refused as it registers (the catalog passes the fuzz binders' registry).
    """

    def __init__(self, fuzz_bindings: Container[str] | None = None) -> None:
        self._rules: dict[str, Rule] = {}
        self._fuzz_bindings = fuzz_bindings

    def add(self, rule: Rule) -> Rule:
        if rule.id in self._rules:
            raise ValueError(f"rule {rule.id} is registered twice")
        if (rule.fuzz is not None and self._fuzz_bindings is not None
                and rule.fuzz not in self._fuzz_bindings):
            raise ValueError(f"rule {rule.id} names the fuzz binding {rule.fuzz!r}, which no "
                             "binder registers (see conformance/bindings/binders.py)")
        self._rules[rule.id] = rule
        return rule

    def rule(
        self,
        rule_id: str,
        level: Level,
        title: str,
        *,
        requirement: str,
        citation: str,
        source: SourceKind,
        probes: Iterable[str] = (),
        traits: Iterable[str] = (),
        features: Iterable[str] = (),
        faults: Iterable[str] = (),
        scan: bool = False,
        fuzz: str | None = None,
    ) -> Callable[[CheckT], CheckT]:
        """Decorator: register the decorated function as the check of a new rule."""

        def register(check: CheckT) -> CheckT:
            self.add(
                Rule(
                    id=rule_id,
                    level=level,
                    title=title,
                    requirement=" ".join(requirement.split()),
                    citation=citation,
                    source=source,
                    check=check,
                    probes=tuple(probes),
                    traits=tuple(traits),
                    features=tuple(features),
                    faults=tuple(faults),
                    scan=scan,
                    fuzz=fuzz,
                )
            )
            return check

        return register

    def __iter__(self) -> Iterator[Rule]:
        return iter(sorted(self._rules.values(), key=sort_key))

    def __len__(self) -> int:
        return len(self._rules)

    def __contains__(self, rule_id: object) -> bool:
        return rule_id in self._rules

    def get(self, rule_id: str) -> Rule:
        try:
            return self._rules[rule_id]
        except KeyError:
            raise KeyError(f"no rule {rule_id!r}") from None

    def select(
        self,
        *,
        profile: spec.Profile | None = None,
        select: Iterable[str] = (),
        deselect: Iterable[str] = (),
    ) -> list[Rule]:
        """Rules for ``profile`` whose ID matches a ``select`` pattern (all when none is given)
        and no ``deselect`` pattern. Patterns are IDs or shell globs (``SSE-*``), any case."""
        chosen = [r for r in self if profile is None or r.applies_to(profile)]
        wanted = [p.upper() for p in select]
        unwanted = [p.upper() for p in deselect]
        if wanted:
            chosen = [r for r in chosen if any(fnmatch.fnmatchcase(r.id, p) for p in wanted)]
        return [r for r in chosen if not any(fnmatch.fnmatchcase(r.id, p) for p in unwanted)]


def sort_key(rule: Rule) -> tuple[str, int]:
    area, number = rule.id.rsplit("-", 1)
    return area, int(number)
