"""The HTML report: one self-contained page a person reads, sends on, or prints.

Nothing is loaded from elsewhere (no font, stylesheet, script or image URL), so it opens from
``file://`` offline. From the top: the verdict, what was tested and how (target, profile, date,
tool version, options, coverage), the latency charts (:mod:`.charts`), a grid of every rule by
area, each cell coloured by its verdict and linking to the rule's entry; then the entries,
what went wrong first (every FAIL, then ERROR, then NON_STRICT, so a failure never sits among
seventy passes) and the rest by area, each with its requirement, source, every finding
(Expected / Actual / path / evidence / curl) and the exchanges it judged
(:mod:`.html_exchanges`); then every recorded exchange. Failing entries are open; a few lines
of script (:mod:`.html_assets`) add the filters.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from html import escape
from pathlib import Path

from conformance.model import VERDICT_ORDER, Finding, RuleResult, RunResult, Verdict

from .charts import histogram_svg
from .connection import WEAKENED, connection_lines
from .html_assets import SCRIPT, STYLE
from .html_exchanges import BODY_LIMIT, cut, exchange_html, summary_line
from .json_report import TOOL, VERSION
from .text import refused_line, search_lines, show

OPEN = (Verdict.FAIL, Verdict.NON_STRICT, Verdict.ERROR)
"""Verdicts whose entries start open, with their exchanges shown in place."""
LEADING = (Verdict.FAIL, Verdict.ERROR, Verdict.NON_STRICT)
"""Verdicts whose entries lead the list, in this order (each in catalog order), before the
rest by area."""


def _badge(verdict: str, text: str | None = None, *, css: str = "badge") -> str:
    return f'<span class="{css} {verdict}">{escape(text or verdict)}</span>'


def run_started(result: RunResult) -> datetime.datetime | None:
    """When the run started (UTC): as the run noted it, else when its first recorded request
    went out; None when neither says."""
    if result.started_at is not None:
        return result.started_at.astimezone(datetime.timezone.utc)
    starts = [ex.timings.started_wall for ex in result.exchanges.values()
              if ex.timings.started_wall > 0]
    if not starts:
        return None
    return datetime.datetime.fromtimestamp(min(starts), tz=datetime.timezone.utc)


def _when(result: RunResult, written: datetime.datetime) -> str:
    started = run_started(result)
    if started is not None:
        return f"run started {started:%Y-%m-%d %H:%M:%S} UTC"
    return f"report written {written.astimezone(datetime.timezone.utc):%Y-%m-%d %H:%M:%S} UTC"


def _options(result: RunResult) -> list[str]:
    options = [f"strict: {'yes' if result.strict else 'no'} (--strict makes NON_STRICT fail)",
               f"fail on skip: {'yes' if result.fail_on_skip else 'no'}"]
    options += [line for line in connection_lines(result) if line != WEAKENED]
    if result.options:
        options.append("given: " + " ".join(result.options))
    return options


def _meta(result: RunResult, written: datetime.datetime) -> str:
    target = result.target
    stats = result.stats
    rows: list[tuple[str, str]] = [
        ("Target", "embedded mock" if target.embedded else target.base_url),
        ("Profile", f"{target.profile_name}, model {target.model}; features: "
                    + (", ".join(target.features) or "none")),
        ("Date", f"{_when(result, written)}, by {TOOL} {VERSION}"),
        ("Options", "; ".join(_options(result))),
        ("Coverage", result.coverage.line()),
    ]
    if result.search is None:
        rows.insert(-1, ("Requests", f"{stats.requests} in {stats.wall_seconds:.1f} s"))
    else:
        rows.insert(-1, ("Search", "; ".join(search_lines(result))))
    if result.coverage.unjudged_must:
        rows.append(("Not judged", "MUST rules " + ", ".join(result.coverage.unjudged_must)))
    refused = refused_line(stats)
    if refused:
        rows.append(("Refused", refused))
    if stats.stopped:
        rows.append(("Stopped", stats.stopped))
    rows += [("Note", note) for note in result.notes]
    rows += [("Run error", error) for error in result.run_errors]
    return "<table class=meta>" + "".join(
        f"<tr><th>{name}</th><td>{escape(text)}</td></tr>" for name, text in rows
    ) + "</table>"


def _counts(result: RunResult) -> str:
    return " ".join(_badge(v.value, f"{count} {v.value}")
                    for v, count in result.counts().items() if count)


def _latency(result: RunResult) -> str:
    stats = result.stats
    if not (stats.ttft_seconds or stats.itl_seconds):
        why = ("no generated request was answered with a whole stream, so there is nothing "
               "to chart" if result.search is not None
               else "no stream was recorded whole, so there is nothing to chart")
        return (f'<section class="latency"><h2>Latency</h2><p class="note">{why}.</p>'
                "</section>")
    return ('<section class="latency"><h2>Latency</h2>'
            + histogram_svg(stats.ttft_seconds, title="time to first token")
            + histogram_svg(stats.itl_seconds, title="inter-token gap")
            + "</section>")


def _by_area(result: RunResult) -> dict[str, list[RuleResult]]:
    areas: dict[str, list[RuleResult]] = {}
    for item in result.results:
        areas.setdefault(item.area, []).append(item)
    return dict(sorted(areas.items()))


def _grid(areas: Mapping[str, list[RuleResult]]) -> str:
    rows = []
    for area, items in areas.items():
        cells = "".join(
            f'<a class="cell {item.verdict.value}" href="#{escape(item.rule.id)}" '
            f'title="{escape(item.rule.id)} {item.verdict.value}: {escape(item.rule.title)}">'
            f"{escape(item.rule.id.rsplit('-', 1)[1])}</a>"
            for item in items
        )
        rows.append(f'<tr><th><a href="#area-{escape(area)}">{escape(area)}</a></th>'
                    f"<td>{cells}</td></tr>")
    legend = " ".join(f"<span>{_badge(v.value)}</span>" for v in VERDICT_ORDER)
    return (f'<section id="grid"><h2>Compatibility by area <span class="legend">{legend}</span>'
            f'</h2><table class="grid">{"".join(rows)}</table></section>')


def _filters(areas: Mapping[str, list[RuleResult]]) -> str:
    boxes = "".join(f'<label><input type="checkbox" name="verdict" value="{v.value}" '
                    f"checked> {v.value}</label>" for v in VERDICT_ORDER)
    options = "".join(f'<option value="{escape(a)}">{escape(a)}</option>' for a in areas)
    return (f'<form id="filters" hidden>Show: {boxes} <label>area <select name="area">'
            f'<option value="">all</option>{options}</select></label></form>')


def _finding(finding: Finding, number: int, total: int, exchanges: Mapping[str, str]) -> str:
    fields: list[tuple[str, str]] = [("Message", escape(finding.message))]
    if finding.path:
        fields.append(("Path", f"<code>{escape(finding.path)}</code>"))
    if finding.expected is not None or finding.actual is not None:
        fields.append(("Expected", f"<pre>{escape(show(finding.expected))}</pre>"))
        fields.append(("Actual", f"<pre>{escape(show(finding.actual))}</pre>"))
    if finding.evidence:
        fields.append(("Evidence", f"<pre>{escape(cut(finding.evidence, BODY_LIMIT))}</pre>"))
    if finding.exchange:
        shown = exchanges.get(finding.exchange)
        fields.append(("Exchange", shown or escape(finding.exchange)))
    if finding.curl:
        fields.append(("Reproduce", f"<pre>{escape(finding.curl)}</pre>"))
    title = f"<h4>Finding {number} of {total}</h4>" if total > 1 else ""
    body = "".join(f"<dt>{name}</dt><dd>{text}</dd>" for name, text in fields)
    return f'<div class="finding">{title}<dl class="fields">{body}</dl></div>'


def _entry(item: RuleResult, result: RunResult, anchors: Mapping[str, str]) -> str:
    rule = item.rule
    verdict = item.verdict.value
    opened = item.verdict in OPEN
    inline = {label: exchange_html(label, result.exchanges[label])
              for label in {*item.exchanges, *(f.exchange for f in item.findings)}
              if opened and label and label in result.exchanges}
    fields = [("Requirement", escape(rule.requirement)),
              ("Source", f"{escape(rule.citation)} ({escape(str(rule.source))})")]
    if item.message and not item.findings:
        fields.append(("Message", escape(item.message)))
    head = "".join(f"<dt>{name}</dt><dd>{text}</dd>" for name, text in fields)
    findings = "".join(_finding(f, n, len(item.findings), inline)
                       for n, f in enumerate(item.findings, 1))
    judged = [label for label in item.exchanges if label in result.exchanges]
    if opened:
        shown = [inline[label] for label in judged
                 if label not in {f.exchange for f in item.findings}]
        listing = "".join(shown)
    else:
        listing = "<ul class=judged>" + "".join(
            f'<li><a href="#{anchors[label]}">{summary_line(label, result.exchanges[label])}'
            "</a></li>" for label in judged) + "</ul>"
    exchanges = (f"<h4>Exchanges judged ({len(judged)})</h4>{listing}"
                 if judged and listing else "")
    why = (f' <span class="note">{escape(cut(item.message, 160))}</span>'
           if item.verdict is Verdict.SKIP and item.message else "")
    return (
        f'<details class="rule {verdict}" id="{escape(rule.id)}" data-verdict="{verdict}" '
        f'data-area="{escape(rule.area)}"{" open" if opened else ""}><summary>'
        f"{_badge(verdict)} <b>{escape(rule.id)}</b> [{rule.level}] {escape(rule.title)}"
        f"{why}</summary><dl class=fields>{head}</dl>{findings}{exchanges}</details>"
    )


def _leading(areas: Mapping[str, list[RuleResult]]) -> list[RuleResult]:
    """The entries that lead the list: every FAIL, then ERROR, then NON_STRICT, each group in
    catalog order (by area)."""
    items = [item for group in areas.values() for item in group if item.verdict in LEADING]
    return sorted(items, key=lambda item: LEADING.index(item.verdict))  # stable: catalog order


def _rules(areas: Mapping[str, list[RuleResult]], result: RunResult,
           anchors: Mapping[str, str]) -> list[str]:
    """The rule list: a section of what went wrong (none when nothing did), then a section per
    area with the rest, which names and links its rules listed above (the grid's row heads
    lead to these sections). Every section is ``section.rules``, which the filters hide when
    they leave it empty."""
    parts: list[str] = []
    leading = _leading(areas)
    if leading:
        parts.append(f'<section class="rules" id="went-wrong"><h3>What went wrong ({len(leading)})'
                     "</h3>")
        parts.extend(_entry(item, result, anchors) for item in leading)
        parts.append("</section>")
    for area, items in areas.items():
        parts.append(f'<section class="rules" id="area-{escape(area)}"><h3>{escape(area)}</h3>')
        above = [item for item in items if item.verdict in LEADING]
        if above:
            links = ", ".join(f'{_badge(item.verdict.value)} <a href="#{escape(item.rule.id)}">'
                              f"{escape(item.rule.id)}</a>" for item in above)
            parts.append(f'<p class="note">Listed above: {links}</p>')
        parts.extend(_entry(item, result, anchors) for item in items
                     if item.verdict not in LEADING)
        parts.append("</section>")
    return parts


def html_report(result: RunResult, *, written: datetime.datetime | None = None) -> str:
    """The whole page; ``written`` (default now) dates a report whose exchanges carry no time."""
    written = written or datetime.datetime.now(datetime.timezone.utc)
    where = "embedded mock" if result.target.embedded else result.target.base_url
    verdict = "PASSED" if result.passed else "FAILED"
    anchors = {label: f"x-{number}" for number, label in enumerate(result.exchanges, 1)}
    areas = _by_area(result)
    strict = " (strict)" if result.strict else ""
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{verdict}: completions conformance of {escape(where)}</title>",
        f"<style>{STYLE}</style></head><body>",
        "<header>",
        f"<h1>{_badge(verdict, css='badge result')}Completions conformance: "
        f"{escape(where)}{strict}</h1>",
        f"<p>{_counts(result)}</p>",
        "".join(f'<p class="warning">{escape(line)}</p>'
                for line in connection_lines(result) if line == WEAKENED),
        f"{_meta(result, written)}</header>",
        "<div class='glance'>",
        _grid(areas),
        _latency(result),
        "</div>",
        f"<h2>Rules ({len(result.results)})</h2>",
        _filters(areas),
        *_rules(areas, result, anchors),
    ]
    if result.exchanges:
        parts.append(f'<section id="exchanges"><h2>Exchanges ({len(result.exchanges)})</h2>')
        parts.extend(exchange_html(label, exchange, anchor=anchors[label])
                     for label, exchange in result.exchanges.items())
        parts.append("</section>")
    parts.append(f"<script>{SCRIPT}</script></body></html>")
    return "\n".join(parts)


def write_html(result: RunResult, path: str | Path) -> None:
    Path(path).write_text(html_report(result), encoding="utf-8")
