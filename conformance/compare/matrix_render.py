"""A matrix of servers for people: Markdown (a CI page, ``docs/compatibility.md``) and one
self-contained HTML page in the HTML report's look (its stylesheet and verdict colours).

Each failing cell links to that server's finding: into the server's own HTML report when one
sits beside its JSON report (``report.html#RULE-ID``), else to the finding listed under the
table (its message, each failing case and a curl that reproduces the first).
"""

from __future__ import annotations

import os
from html import escape
from pathlib import Path

from conformance.reporting.html_assets import STYLE
from conformance.reporting.markdown import inline

from .diff import FAILING
from .matrix import Column, Matrix, cell_text
from .reports import RuleEntry

VERDICTS = ("PASS", "FAIL", "NON_STRICT", "SKIP", "ERROR")
MATRIX_STYLE = """
body{max-width:none}
table.matrix{margin:.5em 0}table.matrix th,table.matrix td{border:1px solid #e4e4e4;
padding:.1em .4em;font-size:.85em}
table.matrix thead th{vertical-align:bottom;position:sticky;top:0;background:#fff;
max-width:13em;overflow-wrap:anywhere}
table.matrix th.rule{font-weight:normal;white-space:nowrap}
table.matrix th.rule span{color:#555;margin-left:.4em}
table.matrix tr.area th,table.matrix tr.area td{background:#f2f2f2;font-weight:600}
table.matrix td.v{color:#fff;text-align:center;white-space:nowrap}
table.matrix td.v a{color:#fff;display:block;text-decoration:none}
table.matrix td.SKIP,table.matrix td.SKIP a{color:#222;background:#d6d6d6}
table.matrix td.none{background:#fff}
.target{color:#555;font-weight:normal;font-size:.85em}
"""


def _anchor(column: Column, rule: str) -> str:
    return f"{column.anchor}-{rule.lower()}"


def _summary(column: Column) -> str:
    counts = {v: 0 for v in VERDICTS}
    for entry in column.report.rules.values():
        counts[entry.verdict] = counts.get(entry.verdict, 0) + 1
    return ", ".join(f"{n} {v}" for v, n in counts.items() if n)


def _target(column: Column) -> str:
    return column.report.label


# ---- Markdown ---------------------------------------------------------------------------


def _md_cell(column: Column, entry: RuleEntry | None) -> str:
    text = cell_text(entry)
    if entry is not None and entry.verdict in FAILING:
        return f"[{text}](#{_anchor(column, entry.rule)})"
    return text


def markdown_table(matrix: Matrix) -> list[str]:
    """The table: a bold row per area (its PASS/FAIL/SKIP counts per server), then a row per
    rule (its verdict per server, a failing one linking to the finding below)."""
    names = [inline(column.name) for column in matrix.columns]
    lines = ["| rule | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for area, rules in matrix.areas.items():
        lines.append(f"| **{inline(area)}** | "
                     + " | ".join(matrix.summary(c, area) for c in matrix.columns) + " |")
        for rule in rules:
            title = inline(matrix.titles.get(rule, ""), 70)
            lines.append(f"| {rule} {title} | "
                         + " | ".join(_md_cell(c, c.entry(rule)) for c in matrix.columns)
                         + " |")
    return lines


def _md_note(matrix: Matrix, column: Column, entry: RuleEntry) -> str:
    """A note given with the matrix is ours, written as Markdown (the lab's ``why``); a
    report's message is the server's words, escaped."""
    note = matrix.notes.get((column.name, entry.rule))
    if note:
        return " ".join(note.split())
    return inline(matrix.note(column, entry), 400)


def _md_findings(matrix: Matrix, column: Column, *, curls: bool) -> list[str]:
    lines: list[str] = []
    for entry in matrix.failing(column):
        lines.append(f'- <a id="{_anchor(column, entry.rule)}"></a>**{entry.rule}** '
                     f"{entry.verdict}: {_md_note(matrix, column, entry)}")
        if not curls:
            continue
        findings = list(entry.findings.values())
        for finding in findings if len(findings) > 1 else ():
            lines.append(f"  - `{inline(finding.case, 160)}`: "
                         f"{inline(finding.message.split(chr(10), 1)[0], 200)}")
        first = next((f.curl for f in findings if f.curl), None)
        if first:
            lines += ["", "  <details><summary>reproduce</summary>", "", "  ```sh",
                      *(f"  {line}" for line in first.splitlines()), "  ```", "",
                      "  </details>", ""]
    skipped = sum(1 for e in column.report.rules.values() if e.verdict == "SKIP")
    lines.append(f"- {skipped} rules SKIP.")
    return lines


def matrix_markdown(matrix: Matrix, *, title: str | None = "Conformance matrix",
                    curls: bool = True) -> str:
    """The matrix as Markdown: the table, then under a heading per server what it failed
    (each rule with its note or message; with ``curls``, its cases and a reproduction)."""
    lines = [f"# {title}", ""] if title else []
    lines += [*markdown_table(matrix), ""]
    for column in matrix.columns:
        about = column.about or f"`{inline(_target(column))}`"
        lines += [f"## {inline(column.name)}: {about}", ""]
        lines += [f"From `{inline(column.report.path)}`: {_summary(column)}.", ""]
        lines += [*_md_findings(matrix, column, curls=curls), ""]
    return "\n".join(lines).rstrip() + "\n"


# ---- HTML -------------------------------------------------------------------------------


def _href(column: Column, rule: str, here: Path) -> str:
    if column.link is not None:
        return f"{os.path.relpath(column.link, here)}#{rule}"
    return f"#{_anchor(column, rule)}"


def _html_cell(column: Column, entry: RuleEntry | None, here: Path) -> str:
    if entry is None:
        return '<td class="none"></td>'
    text = escape(cell_text(entry))
    tip = escape(f"{column.name}: {entry.rule} {entry.verdict}"
                 + (f": {entry.message.splitlines()[0]}" if entry.message else ""), quote=True)
    if entry.verdict in FAILING or column.link is not None:
        text = f'<a href="{escape(_href(column, entry.rule, here))}">{text}</a>'
    return f'<td class="v {entry.verdict}" title="{tip}">{text}</td>'


def _html_table(matrix: Matrix, here: Path) -> str:
    heads = []
    for column in matrix.columns:
        name = escape(column.name)
        if column.link is not None:
            name = f'<a href="{escape(os.path.relpath(column.link, here))}">{name}</a>'
        heads.append(f'<th>{name}<br><span class="target">'
                     f"{escape(column.about or _target(column))}</span></th>")
    rows = [f"<thead><tr><th>rule</th>{''.join(heads)}</tr></thead><tbody>"]
    for area, rules in matrix.areas.items():
        summaries = "".join(f"<td>{escape(matrix.summary(c, area))}</td>"
                            for c in matrix.columns)
        rows.append(f'<tr class="area"><th>{escape(area)}</th>{summaries}</tr>')
        for rule in rules:
            cells = "".join(_html_cell(c, c.entry(rule), here) for c in matrix.columns)
            rows.append(f'<tr><th class="rule">{escape(rule)}<span>'
                        f"{escape(matrix.titles.get(rule, ''))}</span></th>{cells}</tr>")
    return f'<table class="matrix">{"".join(rows)}</tbody></table>'


def _html_findings(matrix: Matrix, column: Column) -> str:
    parts = [f'<section id="{escape(column.anchor)}"><h3>{escape(column.name)} '
             f'<span class="target">{escape(_target(column))} · '
             f"{escape(column.report.path)} · {escape(_summary(column))}</span></h3>"]
    for entry in matrix.failing(column):
        parts.append(f'<details class="rule {entry.verdict}" open '
                     f'id="{escape(_anchor(column, entry.rule))}"><summary>'
                     f'<span class="badge {entry.verdict}">{entry.verdict}</span> '
                     f"<b>{escape(entry.rule)}</b> {escape(entry.title)}</summary>"
                     f'<p>{escape(matrix.note(column, entry))}</p>')
        for finding in entry.findings.values():
            parts.append(f'<div class="finding"><code>{escape(finding.case)}</code>: '
                         f"{escape(finding.message)}")
            if finding.curl:
                parts.append(f"<pre>{escape(finding.curl)}</pre>")
            parts.append("</div>")
        parts.append("</details>")
    if not matrix.failing(column):
        parts.append('<p class="note">Nothing failed.</p>')
    return "".join(parts) + "</section>"


def matrix_html(matrix: Matrix, *, here: Path = Path("."),
                title: str = "Conformance matrix") -> str:
    """One self-contained page: the table (cells coloured by verdict, each failing one a link
    to its finding), then every server's findings with their cases and curl commands.
    ``here`` is the folder the page is written to, for links to reports beside their JSON."""
    legend = " ".join(f'<span class="badge {v}">{v}</span>' for v in VERDICTS)
    findings = "".join(_html_findings(matrix, column) for column in matrix.columns)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{escape(title)}</title><style>{STYLE}{MATRIX_STYLE}</style></head><body>"
        f"<h1>{escape(title)}</h1><p class=\"note\">{len(matrix.columns)} servers by "
        f"{sum(map(len, matrix.areas.values()))} rules. Each area row counts PASS/FAIL/SKIP "
        "of its rules (+NS NON_STRICT, +E ERROR); a cell with a number in brackets failed "
        "that many cases; an empty cell is a rule the server's report does not have. "
        f"<span class=\"legend\">{legend}</span></p>"
        f"{_html_table(matrix, here)}<h2>Findings</h2>{findings}</body></html>\n"
    )
