"""The console report: a summary table by area, then each failure a person can act on.

h2spec's shape: per failure the rule, the requirement, ``Expected:`` / ``Actual:`` with the
JSON path, the evidence (the raw line), and a curl command that reproduces it as pasted (the
API key and ``--header`` values are shell variables, never values).
"""

from __future__ import annotations

import re
from typing import TextIO

from conformance.model import VERDICT_ORDER, RunResult, Verdict

from .connection import connection_lines
from .text import finding_lines, latency_line, refused_line, search_lines

COLUMNS = ("PASS", "FAIL", "NON_STRICT", "SKIP", "ERROR")
_VARIABLE = re.compile(r"\$([A-Z_][A-Z0-9_]*)")


def summary_table(result: RunResult) -> str:
    rows = [("area", *(c.lower().replace("_", "-") for c in COLUMNS))]
    for area, counts in result.by_area().items():
        rows.append((area, *(str(counts[v]) for v in VERDICT_ORDER)))
    totals = result.counts()
    rows.append(("total", *(str(totals[v]) for v in VERDICT_ORDER)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for n, row in enumerate(rows):
        cells = [row[0].ljust(widths[0])]
        cells += [c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)]
        lines.append("  ".join(cells))
        if n == 0 or n == len(rows) - 2:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def write_console(result: RunResult, out: TextIO, *, verbose: bool = False) -> None:
    target = result.target
    where = "embedded mock" if target.embedded else target.base_url
    tool = "completions conformance" if result.search is None else "conformance fuzz"
    out.write(f"{tool}: {where} ")
    out.write(f"(profile {target.profile_name}, model {target.model})\n")
    for line in connection_lines(result):
        out.write(f"  {line}\n")
    for line in search_lines(result):
        out.write(f"{line}\n")
    out.write("\n")
    out.write(summary_table(result) + "\n")
    failures = result.failures()
    for number, item in enumerate(failures, 1):
        out.write(f"\n{number}) {item.verdict}: {item.rule.id} {item.rule.title}\n")
        for label, text in finding_lines(item):
            if label == "Rule":
                continue
            out.write(f"   {label + ':':<12} {text}\n")
    if verbose:
        skipped = [r for r in result.results if r.verdict is Verdict.SKIP]
        if skipped:
            out.write("\nskipped:\n")
            for item in skipped:
                out.write(f"   {item.rule.id}: {item.message}\n")
    variables = sorted(
        {v for item in failures if item.finding and item.finding.curl
         for v in _VARIABLE.findall(item.finding.curl)}
    )
    if variables:
        names = ", ".join(variables)
        out.write(f"\n(the curl commands read secrets from the environment: export {names})\n")
    for error in result.run_errors:
        out.write(f"\nERROR (the run itself): {error}\n")
    counts = result.counts()
    stats = result.stats
    out.write(
        f"\n{len(result.results)} rules: "
        + ", ".join(f"{counts[v]} {v.value.lower().replace('_', '-')}" for v in VERDICT_ORDER)
        + f"; {stats.requests} requests in {stats.wall_seconds:.1f} s"
        + (" (strict)" if result.strict else "")
        + "\n"
    )
    coverage = result.coverage
    out.write(coverage.line() + "\n")
    if coverage.unjudged_must:
        flag = "fails the run" if result.fail_on_skip else "--fail-on-skip would fail the run"
        out.write(f"MUST rules of claimed features not judged ({flag}): "
                  + ", ".join(coverage.unjudged_must) + "\n")
    for extra in (refused_line(stats), latency_line(stats)):
        if extra:
            out.write(extra + "\n")
    out.write(("PASSED" if result.passed else "FAILED") + "\n")
