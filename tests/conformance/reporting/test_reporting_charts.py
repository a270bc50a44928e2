"""The latency charts: an SVG histogram whose bars count every value, with the median and p95
marked where the text summary puts them."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from conformance.model import RunStats
from conformance.reporting.charts import axis_of, histogram_svg, percentile
from conformance.reporting.text import latency_line


def bars(svg: str) -> list[ET.Element]:
    return [e for e in ET.fromstring(svg).iter("rect") if "bar" in e.get("class", "")]


def line_x(svg: str, css: str) -> float:
    found = [e for e in ET.fromstring(svg).iter("line") if e.get("class") == css]
    assert len(found) == 2  # the marker and its sample in the key
    marker = next(e for e in found if e.get("x1") == e.get("x2"))
    return float(marker.get("x1", "nan"))


def test_every_value_is_in_a_bar_and_the_markers_are_in_order() -> None:
    values = [0.010 + 0.001 * (i % 17) for i in range(200)]
    svg = histogram_svg(values, title="time to first token")
    counted = sum(int(str(b.findtext("title")).split()[0]) for b in bars(svg))
    assert counted == len(values)
    assert line_x(svg, "median") < line_x(svg, "p95")
    title = ET.fromstring(svg).findtext("title", "")
    assert title == (f"time to first token: median {1000 * percentile(values, .5):.1f} ms, "
                     f"p95 {1000 * percentile(values, .95):.1f} ms, max 26.0 ms, n = 200")


def test_the_chart_and_the_text_summary_agree() -> None:
    ttft = (0.2031, 0.25, 0.19, 0.31, 0.22)
    line = latency_line(RunStats(ttft_seconds=ttft)) or ""
    svg = histogram_svg(ttft, title="time to first token")
    assert f"median {1000 * percentile(ttft, .5):.1f} ms" in line
    assert f"median {1000 * percentile(ttft, .5):.0f} ms" in svg  # 203 ms: whole ms past 100


def test_outliers_go_in_the_last_bar_and_leave_the_bulk_readable() -> None:
    values = [0.001] * 95 + [0.002] * 4 + [5.0]
    assert axis_of(values).hi == pytest.approx(2 * percentile(values, 0.95))
    assert axis_of(values).lo == 0
    svg = histogram_svg(values, title="inter-token gap")
    shown = bars(svg)
    assert "beyond" in shown[-1].get("class", "")
    assert str(shown[-1].findtext("title")).startswith("1 from")
    assert len(shown) == 3  # the bulk spreads over bins of its own


def test_a_tight_cluster_is_drawn_from_its_smallest_value() -> None:
    values = [0.200 + 0.001 * i for i in range(12)]
    axis = axis_of(values)
    assert (axis.lo, axis.hi) == (0.200, pytest.approx(0.211))
    svg = histogram_svg(values, title="time to first token")
    assert len(bars(svg)) > 6  # spread over the bins, not one bar at the end of 0..211 ms
    assert ">200 ms</text>" in svg


@pytest.mark.parametrize("values", [[0.0], [0.0, 0.0, 0.0], [0.004], [0.2, 0.2]])
def test_a_single_value_or_zeros_still_draw(values: list[float]) -> None:
    svg = histogram_svg(values, title="inter-token gap")
    assert len(bars(svg)) == 1


def test_no_values_is_a_note_not_a_chart() -> None:
    assert histogram_svg([], title="time to first token") == (
        '<p class="nochart">time to first token: nothing measured.</p>')
    with pytest.raises(ValueError, match="no values"):
        percentile([], 0.5)
