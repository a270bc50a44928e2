"""The HTML report: one self-contained page a person reads (no external assets, no script).

A compatibility table by area, then every failure with its requirement, Expected / Actual, the
evidence and the curl command that reproduces it, then every rule's verdict.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from conformance.model import VERDICT_ORDER, RunResult, Verdict

from .connection import connection_lines
from .text import finding_lines, latency_line, search_lines

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:72em;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:2em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .6em}
th{background:#f3f3f3;text-align:left}td.n{text-align:right}
.PASS{color:#176b2c}.FAIL{color:#b00020;font-weight:600}.NON_STRICT{color:#a05a00}
.SKIP{color:#666}.ERROR{color:#7a1fa2;font-weight:600}
.card{border:1px solid #ddd;border-left:4px solid #b00020;padding:.5em 1em;margin:1em 0}
.card.NON_STRICT{border-left-color:#a05a00}.card.ERROR{border-left-color:#7a1fa2}
pre{background:#f7f7f7;padding:.5em;white-space:pre-wrap;word-break:break-all;margin:.2em 0}
dt{font-weight:600;margin-top:.4em}dd{margin-left:1em}
"""

_PRE = {"Evidence", "Reproduce", "Expected", "Actual"}


def _cell(verdict: Verdict, count: int) -> str:
    css = verdict.value if count else ""
    return f'<td class="n {css}">{count}</td>'


def html_report(result: RunResult) -> str:
    target = result.target
    where = "embedded mock" if target.embedded else target.base_url
    verdict = "PASSED" if result.passed else "FAILED"
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>Completions conformance: {escape(where)}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>Completions conformance: {escape(where)}</h1>",
        "".join(f"<p><b>{escape(line)}</b></p>" for line in connection_lines(result)),
        "".join(f"<p>{escape(line)}</p>" for line in search_lines(result)),
        "".join(f"<p class='FAIL'>ERROR (the run itself): {escape(error)}</p>"
                for error in result.run_errors),
        f"<p>Profile <b>{escape(target.profile)}</b>, model <b>{escape(target.model)}</b>, "
        f"features: {escape(', '.join(target.features))}.<br>Result: "
        f"<b class='{'PASS' if result.passed else 'FAIL'}'>{verdict}</b>"
        f"{' (strict)' if result.strict else ''}; {result.stats.requests} requests in "
        f"{result.stats.wall_seconds:.1f} s. {escape(latency_line(result.stats) or '')}<br>"
        f"Coverage: {escape(result.coverage.line())}"
        + (f"; MUST rules not judged: {escape(', '.join(result.coverage.unjudged_must))}"
           if result.coverage.unjudged_must else "") + "</p>",
        "<h2>Compatibility by area</h2><table><tr><th>area</th>",
        "".join(f"<th>{v.value}</th>" for v in VERDICT_ORDER),
        "</tr>",
    ]
    for area, counts in result.by_area().items():
        cells = "".join(_cell(v, counts[v]) for v in VERDICT_ORDER)
        parts.append(f"<tr><td>{escape(area)}</td>{cells}</tr>")
    totals = result.counts()
    cells = "".join(_cell(v, totals[v]) for v in VERDICT_ORDER)
    parts.append(f"<tr><th>total</th>{cells}</tr></table>")
    failures = result.failures()
    parts.append(f"<h2>Failures ({len(failures)})</h2>")
    if not failures:
        parts.append("<p>None.</p>")
    for item in failures:
        parts.append(
            f"<div class='card {item.verdict.value}'><h3 class='{item.verdict.value}'>"
            f"{item.verdict.value}: {escape(item.rule.id)} {escape(item.rule.title)}</h3><dl>"
        )
        for label, text in finding_lines(item):
            body = f"<pre>{escape(text)}</pre>" if label in _PRE else escape(text)
            parts.append(f"<dt>{label}</dt><dd>{body}</dd>")
        parts.append("</dl></div>")
    parts.append("<h2>All rules</h2><table><tr><th>rule</th><th>level</th><th>title</th>"
                 "<th>verdict</th><th>message</th></tr>")
    for item in result.results:
        parts.append(
            f"<tr><td>{escape(item.rule.id)}</td><td>{item.rule.level}</td>"
            f"<td>{escape(item.rule.title)}</td><td class='{item.verdict.value}'>"
            f"{item.verdict.value}</td><td>{escape(item.message)}</td></tr>"
        )
    parts.append("</table></body></html>")
    return "\n".join(parts)


def write_html(result: RunResult, path: str | Path) -> None:
    Path(path).write_text(html_report(result), encoding="utf-8")
