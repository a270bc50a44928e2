"""Latency charts for the HTML report: inline SVG drawn here, no plotting library.

Each chart is a histogram of one distribution (times to first token, or the gaps between
consecutive chunks of the run's streams) with its median (solid line) and 95th percentile
(dashed) marked and labelled, so a reader sees the spread, not one number. Percentiles are
taken as :mod:`conformance.reporting.text` takes them (the value at rank ``int(n * share)``),
so the chart and the text summary agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

WIDTH = 360
HEIGHT = 130
_LEFT, _RIGHT, _TOP, _BOTTOM = 34, 12, 22, 28
_PLOT_W, _PLOT_H = WIDTH - _LEFT - _RIGHT, HEIGHT - _TOP - _BOTTOM
_BASE = HEIGHT - _BOTTOM
"""The y of the x axis."""
BINS = 24


def percentile(values: Sequence[float], share: float) -> float:
    """The value at rank ``int(len(values) * share)`` of the sorted values (the last at most)."""
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def _ms(seconds: float) -> str:
    ms = seconds * 1000
    if ms >= 100:
        return f"{ms:.0f} ms"
    return f"{ms:.1f} ms" if ms >= 1 else f"{ms:.2f} ms"


@dataclass(frozen=True)
class Axis:
    """The x axis of a chart, ``lo`` to ``hi`` seconds."""

    lo: float
    hi: float

    def share(self, value: float) -> float:
        """Where ``value`` lies along the axis, 0 to 1 (values past either end at the end)."""
        return min(1.0, max(0.0, (value - self.lo) / (self.hi - self.lo)))

    def x(self, value: float) -> float:
        return _LEFT + _PLOT_W * self.share(value)

    def at(self, share: float) -> float:
        return self.lo + (self.hi - self.lo) * share


def axis_of(values: Sequence[float]) -> Axis:
    """The axis a distribution is drawn on: from 0, or from its smallest value when all lie in
    the upper half (200 ms to first token, give or take a few: the spread is what shows); to
    its largest value, or to twice the p95 when a few outliers lie beyond it (they are
    counted in the last bar, so the bulk is not squeezed into one)."""
    low, high, p95 = min(values), max(values), percentile(values, 0.95)
    if p95 > 0 and high > 2 * p95:
        high = 2 * p95
    start = low if low > high / 2 else 0.0
    if high - start <= 0:  # one value: a narrow window around it
        return Axis(max(0.0, start - start * 0.05), start * 1.05 if start > 0 else 1e-6)
    return Axis(start, high)


def _counts(values: Sequence[float], axis: Axis, bins: int) -> list[int]:
    counts = [0] * bins
    for value in values:
        counts[min(bins - 1, int(axis.share(value) * bins))] += 1
    return counts


def _marker(x: float, css: str) -> str:
    return (f'<line class="{css}" x1="{x:.1f}" y1="{_TOP}" x2="{x:.1f}" '
            f'y2="{_BASE}"/>')


def _legend(med: float, p95: float) -> str:
    """The key above the plot: a sample of each marker's line and its value."""
    return (f'<line class="median" x1="{_LEFT}" y1="8" x2="{_LEFT + 16}" y2="8"/>'
            f'<text x="{_LEFT + 20}" y="11">median {_ms(med)}</text>'
            f'<line class="p95" x1="{_LEFT + 130}" y1="8" x2="{_LEFT + 146}" y2="8"/>'
            f'<text x="{_LEFT + 150}" y="11">p95 {_ms(p95)}</text>')


def _bars(counts: list[int], axis: Axis, *, beyond: int) -> str:
    """One ``<rect>`` per non-empty bin, each titled with its count and range; the last bin
    also holds the ``beyond`` values past the axis's end, and says so."""
    bins, tallest = len(counts), max(counts)
    bar_w = _PLOT_W / bins
    bars = []
    for index, count in enumerate(counts):
        if not count:
            continue
        h = max(1.0, _PLOT_H * count / tallest)
        low, high = axis.at(index / bins), axis.at((index + 1) / bins)
        last = index == bins - 1 and beyond > 0
        what = (f"{count} from {_ms(low)} up" if last
                else f"{count} between {_ms(low)} and {_ms(high)}")
        bars.append(
            f'<rect class="{"bar beyond" if last else "bar"}" '
            f'x="{_LEFT + index * bar_w + 0.5:.1f}" y="{_BASE - h:.1f}" '
            f'width="{max(bar_w - 1, 1):.1f}" height="{h:.1f}"><title>{what}</title></rect>'
        )
    return "".join(bars)


def _axes(axis: Axis, tallest: int, *, label: str, beyond: int) -> str:
    end = _ms(axis.hi) + ("+" if beyond else "")
    start = _ms(axis.lo) if axis.lo > 0 else "0"
    return (
        f'<line class="axis" x1="{_LEFT}" y1="{_BASE}" x2="{WIDTH - _RIGHT}" y2="{_BASE}"/>'
        f'<line class="axis" x1="{_LEFT}" y1="{_TOP}" x2="{_LEFT}" y2="{_BASE}"/>'
        f'<text x="{_LEFT}" y="{_BASE + 13}" text-anchor="middle">{start}</text>'
        f'<text x="{WIDTH - _RIGHT}" y="{_BASE + 13}" text-anchor="end">{end}</text>'
        f'<text x="{_LEFT - 4}" y="{_TOP + 4}" text-anchor="end">{tallest}</text>'
        f'<text x="{_LEFT - 4}" y="{_BASE}" text-anchor="end">0</text>'
        f'<text x="{_LEFT + _PLOT_W / 2:.1f}" y="{HEIGHT - 3}" text-anchor="middle">'
        f"{escape(label)}</text>"
    )


def histogram_svg(values: Sequence[float], *, title: str, bins: int = BINS) -> str:
    """An SVG histogram of ``values`` (seconds) along :func:`axis_of`, with the median
    and the 95th percentile marked; a short note instead when there are no values."""
    if not values:
        return f'<p class="nochart">{escape(title)}: nothing measured.</p>'
    axis = axis_of(values)
    beyond = sum(value > axis.hi for value in values)
    counts = _counts(values, axis, bins)
    med, p95 = percentile(values, 0.5), percentile(values, 0.95)

    markers = _marker(axis.x(med), "median") + _marker(axis.x(p95), "p95") + _legend(med, p95)
    summary = (f"{title}: median {_ms(med)}, p95 {_ms(p95)}, max {_ms(max(values))}, "
               f"n = {len(values)}")
    axes = _axes(axis, max(counts), label=f"{title}, n = {len(values)}", beyond=beyond)
    return (
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
        f'role="img" aria-label="{escape(summary)}"><title>{escape(summary)}</title>'
        f"{_bars(counts, axis, beyond=beyond)}{axes}{markers}</svg>"
    )


CHART_STYLE = """
svg.chart{font:10px system-ui,sans-serif;display:block;max-width:100%;height:auto}
svg.chart .bar{fill:#7895b8}svg.chart .beyond{fill:#b0bfd2}
svg.chart .axis{stroke:#888;stroke-width:1}
svg.chart line.median{stroke:#1b3a5c;stroke-width:1.5}
svg.chart line.p95{stroke:#b35900;stroke-width:1.5;stroke-dasharray:4 3}
"""
"""The charts' CSS, for the page's one ``<style>`` element."""
