"""The Markdown summary: what a CI job page shows (a GitHub Actions job summary, a GitLab note).

The verdict, the coverage, the table by area, then every FAIL, NON_STRICT and ERROR with its
rule and one line, and each such rule's first finding (Expected / Actual, the evidence and the
curl command that reproduces it) folded in a ``<details>`` block. ``conformance run`` and
``conformance fuzz`` write it with ``--markdown FILE``, and append it to
``$GITHUB_STEP_SUMMARY`` whenever that is set (GitHub's convention: each step appends).

What a server sent (messages quote it) is text, never markup: table cells and summaries escape
Markdown and HTML (``|``, backticks, ``<``, ``$``...), findings and commands go in fenced blocks
longer than any backtick run they hold. GitHub refuses a step summary over 1 MiB, so this stays
under :data:`MAX_BYTES`: cells, evidence and commands are cut, and past the budget the summary
says how many failures it left to the JSON report.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from datetime import timezone
from pathlib import Path

from conformance.model import VERDICT_ORDER, RuleResult, RunResult

from .connection import connection_lines
from .text import finding_lines, latency_line, refused_line, search_lines

MAX_BYTES = 256 << 10
"""The summary's size at most: a quarter of GitHub's 1 MiB per step, so a step may append
several runs."""
MAX_CELL = 200
"""Characters of server-provided text in one table cell or summary line."""
MAX_FIELD = 500
"""Characters of one field of a finding (Expected, Actual, Evidence...)."""
MAX_CURL = 4000
"""Characters of a curl command (a longer one is cut: the JSON report keeps it whole)."""
SUMMARY_VARIABLE = "GITHUB_STEP_SUMMARY"

_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")
_SPECIAL = re.compile(r"([\\`*_\[\]|~$])")
"""What opens markup within a line (server text never starts one: it follows our own words)."""
_BACKTICKS = re.compile(r"`+")
_VARIABLE = re.compile(r"\$([A-Z_][A-Z0-9_]*)")
"""A shell variable a curl command reads (``$OPENAI_API_KEY``): names, never values."""


def inline(text: str, limit: int = MAX_CELL) -> str:
    """``text`` as one line of Markdown that reads as the text: control characters and line
    breaks become spaces, cut to ``limit`` characters, HTML and Markdown escaped (a ``|``
    cannot end a table cell, a backtick open code, a ``<`` open a tag, a ``$`` open math).
    Server text always follows words of ours, so what only counts at a line's start (``#``,
    ``-``, ``1.``) needs nothing."""
    line = _CONTROL.sub(" ", text).strip()
    if len(line) > limit:
        line = line[: limit - 1] + "…"
    line = line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _SPECIAL.sub(r"\\\1", line)


def fenced(text: str, info: str = "") -> str:
    """``text`` in a fenced code block that nothing in it can close."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def _cut(text: str, limit: int, what: str) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters: {what})"


def _header(result: RunResult) -> list[str]:
    target = result.target
    tool = "completions conformance" if result.search is None else "conformance fuzz"
    verdict = "✅ PASSED" if result.passed else "❌ FAILED"
    where = "the embedded mock" if target.embedded else inline(target.base_url)
    counts = result.counts()
    tally = ", ".join(f"{counts[v]} {v.value.lower().replace('_', '-')}" for v in VERDICT_ORDER)
    stats = result.stats
    items = [
        f"**Target:** {where} (profile {inline(target.profile_name)}, "
        f"model {inline(target.model)})",
        f"**Rules:** {len(result.results)}: {tally}; {stats.requests} requests in "
        f"{stats.wall_seconds:.1f} s" + (" (strict)" if result.strict else ""),
        f"**Coverage:** {inline(result.coverage.line(), MAX_FIELD)}",
    ]
    if result.started_at is not None:
        started = result.started_at.astimezone(timezone.utc)
        items.append(f"**Started:** {started:%Y-%m-%d %H:%M:%S} UTC")
    if result.options:
        items.append(f"**Options:** {inline(' '.join(result.options), MAX_FIELD)}")
    unjudged = result.coverage.unjudged_must
    if unjudged:
        flag = "fails the run" if result.fail_on_skip else "--fail-on-skip would fail the run"
        items.append(f"**MUST rules of claimed features not judged** ({inline(flag)}): "
                     + inline(", ".join(unjudged), MAX_FIELD))
    extras = [*search_lines(result), *connection_lines(result),
              refused_line(stats), latency_line(stats), *result.notes]
    items += [inline(extra, MAX_FIELD) for extra in extras if extra]
    return [f"## {tool}: {verdict}", "", *(f"- {item}" for item in items)]


def _area_table(result: RunResult) -> list[str]:
    head = "| area | pass | fail | non-strict | skip | error |"
    rows = [head, "|:--|--:|--:|--:|--:|--:|"]
    for area, counts in result.by_area().items():
        rows.append(f"| {inline(area)} | " + " | ".join(str(counts[v]) for v in VERDICT_ORDER)
                    + " |")
    totals = result.counts()
    rows.append("| **total** | " + " | ".join(f"**{totals[v]}**" for v in VERDICT_ORDER) + " |")
    return rows


def _one_line(item: RuleResult) -> str:
    finding = item.finding
    message = (finding.message if finding else item.message) or "(no message)"
    first = message.strip().splitlines()[0] if message.strip() else message
    if finding is not None and finding.path:
        first = f"{finding.path}: {first}"
    if item.more:
        first += f" (and {len(item.more)} more cases)"
    return inline(first)


def _row(item: RuleResult) -> str:
    rule = item.rule
    return (f"| {item.verdict.value.replace('_', '-')} | `{rule.id}` | {rule.level} | "
            f"{inline(rule.title)} | {_one_line(item)} |")


def _details(item: RuleResult) -> str:
    """The rule's finding and the curl command of its first case, folded."""
    rule = item.rule
    fields = [(label, _cut(text.rstrip(), MAX_FIELD, "see the JSON report"))
              for label, text in finding_lines(item) if label not in ("Rule", "Reproduce")]
    width = max(len(label) for label, _ in fields) + 2
    body = "\n".join(f"{label + ':':<{width}}{text}" for label, text in fields)
    # an HTML block: no Markdown in it, so HTML's escaping, not ours
    verdict = item.verdict.value.replace("_", "-")
    parts = [f"<details><summary>{verdict} <code>{html.escape(rule.id)}</code> "
             f"{html.escape(rule.title)}</summary>", "", fenced(body, "text")]
    curl = item.finding.curl if item.finding else None
    if curl:
        parts += ["", fenced(_cut(curl, MAX_CURL, "the JSON report keeps the whole command"),
                             "sh")]
    parts += ["", "</details>"]
    return "\n".join(parts)


def markdown_summary(result: RunResult, *, max_bytes: int = MAX_BYTES) -> str:
    """The run as Markdown, at most ``max_bytes`` bytes of UTF-8."""
    lines = [*_header(result), "", *_area_table(result)]
    failures = result.failures()
    errors = result.run_errors
    if errors:
        lines += ["", "### The run itself", ""]
        lines += [f"- ERROR: {inline(error, MAX_FIELD)}" for error in errors]
    if failures:
        lines += ["", f"### Failures ({len(failures)})", "",
                  "| verdict | rule | level | title | finding |", "|---|---|---|---|---|"]
    used = len("\n".join(lines).encode()) + 200  # room for the note below
    shown = 0
    for item in failures:
        row = _row(item)
        if used + len(row.encode()) + 1 > max_bytes:
            break
        lines.append(row)
        used += len(row.encode()) + 1
        shown += 1
    folded = [item for item in failures[:shown] if item.finding is not None]
    if folded:
        lines += ["", "### Reproduce", ""]
        variables = sorted({name for item in folded if item.finding and item.finding.curl
                            for name in _VARIABLE.findall(item.finding.curl)})
        if variables:
            lines += ["The commands read secrets from the environment: export "
                      + ", ".join(f"`{name}`" for name in variables) + ".", ""]
        used += 200
    unfolded = 0
    for item in folded:
        block = _details(item)
        if used + len(block.encode()) + 2 > max_bytes:
            unfolded += 1
            continue
        lines += [block, ""]
        used += len(block.encode()) + 2
    left = len(failures) - shown
    if left or unfolded:
        lines += ["", f"*Not shown here (the summary is kept under {max_bytes >> 10} KiB): "
                  f"{left} failures, {unfolded} reproductions; the JSON report (--json) has "
                  "them all.*"]
    return "\n".join(lines).rstrip("\n") + "\n"


def summary_destinations(path: str | None, environ: Mapping[str, str]
                         ) -> tuple[tuple[Path, bool], ...]:
    """Where the summary goes, each with whether it is appended: ``--markdown FILE``
    (written), and ``$GITHUB_STEP_SUMMARY`` whenever that is set and not empty (appended, as
    GitHub expects; empty opts out), so a job keeping the file as an artifact still has its
    job summary. ``--markdown`` naming the step summary itself appends it once."""
    step = environ.get(SUMMARY_VARIABLE)
    destinations = [(Path(step), True)] if step else []
    if path and not (step and Path(path).resolve() == Path(step).resolve()):
        destinations.insert(0, (Path(path), False))
    return tuple(destinations)


def write_markdown(result: RunResult, path: str | Path, *, append: bool = False) -> None:
    """Write the summary to ``path``, or append it (after a blank line) with ``append``."""
    text = markdown_summary(result)
    if append:
        with Path(path).open("a", encoding="utf-8") as file:
            file.write("\n" + text)
    else:
        Path(path).write_text(text, encoding="utf-8")
