"""A saved JSON report read back for comparison: each rule's verdict and its findings, keyed
by case rather than by wording.

A finding's case is its rule, the exchange it was found in and the JSON path it points at
(``USAGE-005 @ stream/s usage``); the message is not part of it, so a reworded message is the
same finding. A fuzz finding's exchange label is numbered in the order found (``fuzz/3: POST
/completions, negative data, HTTP 500, shrunk``), which changes from run to run; its case drops
the number. Reports of any format version are read (the lab's recordings predate
``format_version``); the shape read is ``conformance/reporting/report.schema.json``'s.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_FUZZ_NUMBER = re.compile(r"^fuzz/\d+: ")


class ReportError(Exception):
    """A file that is not a report this tool wrote, said in one line."""


@dataclass(frozen=True)
class SavedFinding:
    """One failing case of a rule, as the report recorded it."""

    case: str
    message: str
    curl: str | None = None


@dataclass(frozen=True)
class RuleEntry:
    """One rule's result in a saved report."""

    rule: str
    level: str
    verdict: str
    message: str
    area: str
    title: str
    findings: dict[str, SavedFinding] = field(default_factory=dict)


@dataclass(frozen=True)
class SavedReport:
    """What a comparison reads of one report."""

    path: str
    base_url: str
    profile_name: str
    """The profile's name (the report's ``target.profile``)."""
    model: str
    started_at: str | None
    fuzz: bool
    rules: dict[str, RuleEntry]
    options: tuple[str, ...] = ()
    """The options the run echoed (``--select SSE-*``), where the report says."""

    @property
    def label(self) -> str:
        """``profile @ base URL`` (``embedded mock`` for the mock the harness started)."""
        return f"{self.profile_name} @ {self.base_url}"


def finding_case(finding: dict[str, Any]) -> str:
    """The case a finding stands for: its exchange (fuzz numbering dropped) and path."""
    exchange = _FUZZ_NUMBER.sub("", str(finding.get("exchange") or ""))
    path = finding.get("path")
    return f"{exchange or '-'}" + (f" {path}" if path else "")


def _entry(result: dict[str, Any]) -> RuleEntry:
    findings: dict[str, SavedFinding] = {}
    for finding in result.get("findings") or ([result["finding"]] if result.get("finding")
                                              else []):
        case = finding_case(finding)
        findings.setdefault(case, SavedFinding(case, str(finding.get("message") or ""),
                                               finding.get("curl")))
    return RuleEntry(rule=str(result["rule"]), level=str(result.get("level", "")),
                     verdict=str(result["verdict"]), message=str(result.get("message") or ""),
                     area=str(result.get("area") or ""), title=str(result.get("title") or ""),
                     findings=findings)


def load_report(path: str | Path) -> SavedReport:
    """Read the report at ``path``; :class:`ReportError` when it is not one."""
    name = str(path)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ReportError(f"cannot read {name}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ReportError(f"{name} is not JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise ReportError(f"{name} is not a conformance report (no results): write one with "
                          f"`conformance run --json FILE` or `conformance fuzz --json FILE`")
    try:
        rules = {entry.rule: entry for entry in map(_entry, data["results"])}
        target = data.get("target") or {}
        embedded = bool(target.get("embedded"))
        return SavedReport(
            path=name,
            base_url="embedded mock" if embedded else str(target.get("base_url", "?")),
            profile_name=str(target.get("profile", "?")), model=str(target.get("model", "?")),
            started_at=data.get("started_at"), fuzz=data.get("search") is not None,
            rules=rules, options=tuple(map(str, data.get("options") or ())))
    except (KeyError, TypeError, AttributeError) as exc:
        raise ReportError(f"{name}: a result is not shaped like a report's ({exc!r})") from None
