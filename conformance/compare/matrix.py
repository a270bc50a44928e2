"""Servers against servers: one table of rules (rows, grouped by area) by servers (columns),
each cell a rule's verdict on a server and the number of its failing cases.

A column is one report (:mod:`.reports`: of ``run`` or ``fuzz``, or a lab recording), named by
the user (``--label``) or else by the report's file, and described by its target (profile and
base URL). A rule a report lacks (a FriendliAI rule in an OpenAI run) leaves its cell empty:
not judged is not the same as SKIP. Each area also gets a summary per server, the counts of
PASS / FAIL / SKIP of its rules with NON_STRICT and ERROR when there are any, so the table
reads at two depths: which areas a server is weak in, and which rule.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .diff import FAILING
from .reports import RuleEntry, SavedReport

SUMMARY_EXTRAS = (("NON_STRICT", "NS"), ("ERROR", "E"))
"""Verdicts an area's summary adds after PASS/FAIL/SKIP, with their short names."""


def area_of(rule: str) -> str:
    """A rule's area, the prefix of its ID (``CONTENT-TYPE`` of ``CONTENT-TYPE-003``)."""
    return rule.rsplit("-", 1)[0]


def _rule_order(rule: str) -> tuple[str, int, str]:
    number = rule.rsplit("-", 1)[-1]
    return area_of(rule), int(number) if number.isdigit() else 0, rule


@dataclass(frozen=True)
class Column:
    """One server: a report and the name its column shows."""

    name: str
    report: SavedReport
    about: str = ""
    """A line said of the server under its name (the lab: its version and profile)."""
    link: str | None = None
    """Where the server's own report reads further (its HTML report), if anywhere."""

    @property
    def anchor(self) -> str:
        """A fragment-safe form of the name, for links into the matrix page."""
        return re.sub(r"[^a-z0-9]+", "-", self.name.lower()).strip("-") or "server"

    def entry(self, rule: str) -> RuleEntry | None:
        return self.report.rules.get(rule)


@dataclass(frozen=True)
class Matrix:
    """Rules by servers; areas and rules in ID order."""

    columns: tuple[Column, ...]
    areas: dict[str, tuple[str, ...]]
    """Area -> its rules, in ID order."""
    titles: dict[str, str] = field(default_factory=dict)
    """Rule -> title, from the first report that has the rule."""
    notes: dict[tuple[str, str], str] = field(default_factory=dict)
    """(column name, rule) -> a line saying why the rule fails there (the lab's ``why``),
    shown in place of the report's message."""

    def summary(self, column: Column, area: str) -> str:
        """``PASS/FAIL/SKIP`` counts of the area's rules on a server, ``+1 NS`` / ``+1 E``
        added when there are any; empty when the server was judged on none of them."""
        verdicts = [entry.verdict for rule in self.areas[area]
                    if (entry := column.entry(rule)) is not None]
        if not verdicts:
            return ""
        text = "/".join(str(verdicts.count(v)) for v in ("PASS", "FAIL", "SKIP"))
        extra = [f"+{verdicts.count(v)} {short}" for v, short in SUMMARY_EXTRAS
                 if verdicts.count(v)]
        return " ".join([text, *extra])

    def failing(self, column: Column) -> list[RuleEntry]:
        """The server's failing rules (FAIL, NON_STRICT, ERROR), in table order."""
        return [entry for rules in self.areas.values() for rule in rules
                if (entry := column.entry(rule)) is not None and entry.verdict in FAILING]

    def note(self, column: Column, entry: RuleEntry) -> str:
        """Why the rule fails on the server: the note given, else the report's message."""
        return self.notes.get((column.name, entry.rule)) or entry.message.split("\n", 1)[0]


def cell_text(entry: RuleEntry | None) -> str:
    """A cell's text: the verdict, and the number of failing cases when more than one."""
    if entry is None:
        return ""
    cases = len(entry.findings)
    return f"{entry.verdict} ({cases})" if entry.verdict in FAILING and cases > 1 else entry.verdict


def default_name(report: SavedReport) -> str:
    """The column name of a report given no ``--label``: its file's name without ``.json``."""
    return Path(report.path).name.removesuffix(".json")


def build_matrix(reports: Sequence[SavedReport], *, names: Sequence[str] = (),
                 abouts: Sequence[str] = (),
                 notes: dict[tuple[str, str], str] | None = None) -> Matrix:
    """The matrix of ``reports`` in the order given, the first ``len(names)`` named so (the
    rest by :func:`default_name`); a name given twice is made unique with ``#2``."""
    columns: list[Column] = []
    seen: dict[str, int] = {}
    for index, report in enumerate(reports):
        name = names[index] if index < len(names) else default_name(report)
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            name = f"{name} #{seen[name]}"
        about = abouts[index] if index < len(abouts) else ""
        columns.append(Column(name, report, about, _html_beside(report)))
    rules = sorted({rule for report in reports for rule in report.rules}, key=_rule_order)
    areas: dict[str, tuple[str, ...]] = {}
    for rule in rules:
        areas[area_of(rule)] = (*areas.get(area_of(rule), ()), rule)
    titles: dict[str, str] = {}
    for report in reports:
        for rule, entry in report.rules.items():
            titles.setdefault(rule, entry.title)
    return Matrix(tuple(columns), areas, titles, dict(notes or {}))


def _html_beside(report: SavedReport) -> str | None:
    """The report's HTML (``report.html`` beside ``report.json``), when it exists."""
    html = Path(report.path).with_suffix(".html")
    return str(html) if html.is_file() else None
