"""A report diff for people (console, Markdown) and for programs (JSON)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TextIO

from conformance.reporting.markdown import inline

from .diff import Change, ChangeKind, ReportDiff

HEADINGS = {
    ChangeKind.WORSE: "got worse",
    ChangeKind.BETTER: "got better",
    ChangeKind.NEWLY_SKIPPED: "newly skipped (a verdict lost, not a regression)",
    ChangeKind.NEWLY_JUDGED: "newly judged",
}


def _sides(diff: ReportDiff) -> list[str]:
    return [f"before: {diff.before.path} ({diff.before.label})",
            f"after:  {diff.after.path} ({diff.after.label})"]


def _message(change: Change) -> str:
    entry = change.after if change.kind is not ChangeKind.BETTER else change.before
    return entry.message if entry is not None and entry.message else ""


def write_text(diff: ReportDiff, out: TextIO) -> None:
    """The diff as the console shows it: each kind of change, each rule with its verdicts,
    its new (or fixed) cases and the curl of the first new one."""
    for line in _sides(diff):
        out.write(line + "\n")
    if not diff.changes:
        out.write("\nno rule changed\n")
    for kind, heading in HEADINGS.items():
        changes = diff.of_kind(kind)
        if not changes:
            continue
        out.write(f"\n{heading}: {len(changes)}\n")
        for change in changes:
            out.write(f"  {change.rule:<18} {change.verdicts:<18} {change.title}\n")
            message = _message(change)
            if message and kind in (ChangeKind.WORSE, ChangeKind.BETTER):
                out.write(f"      {message.splitlines()[0][:160]}\n")
            for finding in change.new_findings:
                out.write(f"      + {finding.case}: {finding.message.splitlines()[0][:140]}\n")
            for finding in change.fixed_findings:
                out.write(f"      - {finding.case}\n")
            first = next((f.curl for f in change.new_findings if f.curl), None)
            if first:
                out.write(f"      reproduce: {first.splitlines()[0][:300]}\n")
    worse = len(diff.of_kind(ChangeKind.WORSE))
    out.write(f"\n{worse} worse, {len(diff.of_kind(ChangeKind.BETTER))} better, "
              f"{len(diff.of_kind(ChangeKind.NEWLY_SKIPPED))} newly skipped, "
              f"{len(diff.of_kind(ChangeKind.NEWLY_JUDGED))} newly judged\n")
    out.write("REGRESSED\n" if worse else "NO REGRESSION\n")


def _finding(finding: Any) -> dict[str, Any]:
    return {"case": finding.case, "message": finding.message, "curl": finding.curl}


def diff_json(diff: ReportDiff) -> dict[str, Any]:
    """The diff as data: both reports, every change with its verdicts and cases."""
    return {
        "before": {"path": diff.before.path, "target": diff.before.label},
        "after": {"path": diff.after.path, "target": diff.after.label},
        "regressed": bool(diff.exit_code),
        "changes": [
            {"rule": c.rule, "kind": c.kind.value, "title": c.title,
             "before": c.before.verdict if c.before else None,
             "after": c.after.verdict if c.after else None,
             "message": _message(c),
             "new_findings": [_finding(f) for f in c.new_findings],
             "fixed_findings": [_finding(f) for f in c.fixed_findings]}
            for c in diff.changes
        ],
    }


def write_json(diff: ReportDiff, path: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(diff_json(diff), handle, indent=2)
        handle.write("\n")


def diff_markdown(diff: ReportDiff) -> str:
    """The diff as a CI page shows it: a verdict line, a table per kind of change, and the
    curl of each regression's first new case folded in ``<details>``."""
    worse = diff.of_kind(ChangeKind.WORSE)
    lines = [f"## Conformance diff: {'regressed' if worse else 'no regression'}", "",
             f"- **Before:** `{inline(diff.before.path)}` ({inline(diff.before.label)})",
             f"- **After:** `{inline(diff.after.path)}` ({inline(diff.after.label)})", ""]
    if not diff.changes:
        lines.append("No rule changed.")
    for kind, heading in HEADINGS.items():
        changes = diff.of_kind(kind)
        if not changes:
            continue
        lines += [f"### {heading.capitalize()} ({len(changes)})", "",
                  "| rule | verdicts | cases | what |", "| --- | --- | --- | --- |"]
        for change in changes:
            cases = " ".join([f"+{len(change.new_findings)}"] * bool(change.new_findings)
                             + [f"-{len(change.fixed_findings)}"] * bool(change.fixed_findings))
            lines.append(f"| {change.rule} | {change.verdicts} | {cases} | "
                         f"{inline(_message(change) or change.title)} |")
        lines.append("")
        for change in changes if kind is ChangeKind.WORSE else ():
            curl = next((f.curl for f in change.new_findings if f.curl), None)
            if curl:
                lines += [f"<details><summary>{change.rule}: reproduce</summary>", "",
                          "```sh", curl, "```", "", "</details>", ""]
    return "\n".join(lines).rstrip() + "\n"


def write_markdown(diff: ReportDiff, path: str | Path, *, append: bool = False) -> None:
    """Write the Markdown diff to ``path``, or append it (``$GITHUB_STEP_SUMMARY``)."""
    with open(path, "a" if append else "w", encoding="utf-8") as handle:
        handle.write(("\n" if append else "") + diff_markdown(diff))
