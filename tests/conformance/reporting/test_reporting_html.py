"""The HTML report as a file someone is sent: it parses, loads nothing from elsewhere, every
grid cell leads to its rule's entry, a FAIL's finding is in that entry, exchanges open and
stay bounded, and the header says what was tested, when and how."""

from __future__ import annotations

import dataclasses
import io
import json
import re
import shutil
import struct
import subprocess
from html import unescape
from pathlib import Path

import pytest
import yaml
from harness_support import chunk, frames, run_catalog, sse_exchange
from html_support import Page, read_page

from conformance.cli import main
from conformance.model import Finding, RunResult, Verdict
from conformance.reporting import html_report
from conformance.reporting.html_exchanges import BODY_LIMIT, EVENT_LIMIT, exchange_html
from conformance.reporting.json_report import VERSION
from conformance.target.embedded import EmbeddedMock
from conformance.transport import Termination

FAULTS = ["usage-total-wrong", "text-after-finish", "best-of-ignored"]


@pytest.fixture(scope="module")
def failing(mock: EmbeddedMock) -> RunResult:
    return run_catalog(mock.openai_url, "openai", faults=FAULTS)


@pytest.fixture(scope="module")
def clean(mock: EmbeddedMock) -> RunResult:
    return run_catalog(mock.openai_url, "openai")


def assert_self_contained(html: str) -> Page:
    """The page parses with every element closed in order, its ids are unique, and nothing in
    it is fetched: no src, no stylesheet or image, and every link a fragment of the page."""
    page = read_page(html)
    assert html.startswith("<!DOCTYPE html>")
    assert page.problems == []
    assert len(page.ids) == len(set(page.ids))
    assert not [t.name for t in page.tags if t.name in {"link", "img", "iframe", "object",
                                                        "embed", "base"}]
    for tag in page.tags:
        assert "src" not in tag.attrs, tag
        assert not any("://" in (value or "") for value in tag.attrs.values()), tag
        href = tag.attrs.get("href")
        if href is not None:
            assert href.startswith("#") and href[1:] in page.ids, href
    styles = re.findall(r"<style>(.*?)</style>", html, re.S)
    assert styles and not any(re.search(r"@import|url\(", style) for style in styles)
    return page


def assert_grid_leads_to_entries(page: Page, result: RunResult) -> None:
    cells = page.by_class("a", "cell")
    assert [c.attrs["href"] for c in cells] == [
        f"#{item.rule.id}" for area in sorted({i.area for i in result.results})
        for item in result.results if item.area == area
    ]
    for item in result.results:
        cell = next(c for c in cells if c.attrs["href"] == f"#{item.rule.id}")
        entry = page.element(item.rule.id)
        assert item.verdict.value in cell.classes
        assert entry.name == "details" and item.verdict.value in entry.classes


def test_the_report_of_three_faults_is_one_file_whose_cells_lead_to_their_rules(
        failing: RunResult) -> None:
    page = assert_self_contained(html_report(failing))
    assert_grid_leads_to_entries(page, failing)
    assert {c.attrs["href"] for c in page.by_class("a", "cell") if "FAIL" in c.classes} >= {
        "#USAGE-001", "#FINISH-004"}


def listed(page: Page) -> list[str]:
    """The rule entries' IDs in the order the page lists them."""
    return [str(tag.attrs["id"]) for tag in page.by_class("details", "rule")]


def catalog_order(result: RunResult) -> list[str]:
    """The rules by area, as the grid shows them."""
    return [item.rule.id for area in sorted({i.area for i in result.results})
            for item in result.results if item.area == area]


def test_the_list_leads_with_fail_then_error_then_non_strict(clean: RunResult) -> None:
    """A FAIL late in the catalog comes first in the list, then ERROR, then NON_STRICT, each
    in catalog order, then the rest in catalog order; the grid keeps catalog order, and the
    area a leading rule was taken from names it and links to it."""
    order = catalog_order(clean)
    wanted = {order[-1]: Verdict.FAIL, order[5]: Verdict.NON_STRICT, order[3]: Verdict.FAIL,
              order[-2]: Verdict.ERROR, order[0]: Verdict.NON_STRICT}
    results = tuple(
        dataclasses.replace(item, verdict=wanted[item.rule.id], message="broken",
                            finding=Finding("broken"))
        if item.rule.id in wanted else item for item in clean.results)
    result = dataclasses.replace(clean, results=results)
    page = assert_self_contained(html_report(result))
    assert_grid_leads_to_entries(page, result)
    leading = [order[3], order[-1], order[-2], order[0], order[5]]
    assert listed(page) == leading + [i for i in order if i not in wanted]
    assert "What went wrong (5)" in page.text["went-wrong"]
    last = next(item for item in clean.results if item.rule.id == order[-1])
    links = [t.attrs["href"] for t in page.inner[f"area-{last.area}"] if t.name == "a"]
    assert f"#{order[-1]}" in links and f"#{order[-2]}" in links


def test_a_clean_list_keeps_catalog_order(clean: RunResult) -> None:
    page = read_page(html_report(clean))
    assert listed(page) == catalog_order(clean) and "went-wrong" not in page.ids


def test_the_mock_s_faults_lead_the_list_of_a_real_run(failing: RunResult) -> None:
    verdict = {item.rule.id: item.verdict for item in failing.results}
    order = catalog_order(failing)
    groups = [[rule for rule in order if verdict[rule] is v]
              for v in (Verdict.FAIL, Verdict.ERROR, Verdict.NON_STRICT)]
    assert groups[0]
    leading = [rule for group in groups for rule in group]
    assert listed(read_page(html_report(failing))) == leading + [
        rule for rule in order if rule not in leading]


def test_a_fail_entry_is_open_with_its_finding_and_exchange(failing: RunResult) -> None:
    page = read_page(html_report(failing))
    entry = page.element("USAGE-001")
    assert "open" in entry.attrs
    text = page.text["USAGE-001"]
    for words in ("Requirement", "Every usage object has integer", "Source",
                  "spec/completions.yaml", "Expected", "19", "Actual", "20", "Path",
                  "usage.total_tokens", "Evidence", "Reproduce", "curl -sS"):
        assert words in text, words
    # the exchange it judged opens in place: request, status, headers, body
    opened = [t for t in page.inner["USAGE-001"] if t.name == "details"]
    assert opened and "POST http://" in text and "HTTP/1.1 200" in text
    assert "content-type: application/json" in text.lower()
    # a passing entry starts closed and links to the exchanges it judged
    passing = next(r for r in failing.results if r.verdict is Verdict.PASS and r.exchanges)
    assert "open" not in page.element(passing.rule.id).attrs
    links = [t.attrs["href"] for t in page.inner[passing.rule.id] if t.name == "a"]
    assert links and all(page.element(str(h)[1:]).name == "details" for h in links)


def test_failure_cards_use_colour_for_the_verdict_only(failing: RunResult) -> None:
    page = read_page(html_report(failing))
    verdicts = {v.value for v in Verdict} | {"PASSED", "FAILED"}
    coloured = {(t.name, frozenset(t.classes - verdicts)) for t in page.tags
                if t.classes & verdicts}
    assert coloured <= {("span", frozenset({"badge"})), ("a", frozenset({"cell"})),
                        ("span", frozenset({"badge", "result"})),
                        ("details", frozenset({"rule"}))}
    bold = [t for t in page.inner["USAGE-001"] if t.name in {"b", "strong", "em"}]
    assert len(bold) == 1  # the rule's ID in the entry's summary, and no field of the card


def test_the_header_says_what_was_tested_when_and_how(failing: RunResult) -> None:
    html = html_report(failing)
    header = html[html.index("<header>"):html.index("</header>")]
    text = re.sub(r"<[^>]+>", " ", header)
    assert "FAILED" in text and failing.target.base_url in text
    assert "Profile" in text and "openai, model reference-ngram" in text
    assert re.search(r"run started 20\d\d-\d\d-\d\d \d\d:\d\d:\d\d UTC", text)
    assert f"completions-conformance {VERSION}" in text
    assert "strict: no" in text and failing.coverage.line() in text
    assert "2 FAIL" in text


def test_the_clean_report_passes_and_draws_both_latency_charts(clean: RunResult) -> None:
    html = html_report(clean)
    page = assert_self_contained(html)
    assert_grid_leads_to_entries(page, clean)
    assert "PASSED" in html[html.index("<header>"):html.index("</header>")]
    assert not [c for c in page.by_class("a", "cell") if c.classes & {"FAIL", "ERROR"}]
    charts = page.by_class("svg", "chart")
    assert len(charts) == 2
    labels = [str(c.attrs["aria-label"]) for c in charts]
    assert labels[0].startswith("time to first token: median")
    assert labels[1].startswith("inter-token gap: median")
    assert f"n = {len(clean.stats.ttft_seconds)}" in labels[0]
    assert not [t for t in page.tags if "open" in t.attrs and t.name == "details"]


def test_exchanges_are_cut_to_a_few_kilobytes_with_a_note(failing: RunResult) -> None:
    stream = failing.exchanges["greedy/s"]
    long_stream = dataclasses.replace(stream, events=stream.events * 20)
    shown = exchange_html("greedy/s", long_stream, anchor="x-1")
    page = read_page(shown)
    assert page.problems == [] and page.element("x-1").name == "details"
    rows = [t for t in page.tags if t.name == "tr"]
    assert len(rows) == EVENT_LIMIT + 1  # and the header row
    assert f"{len(long_stream.events) - EVENT_LIMIT} more events not shown" in shown
    assert re.search(r"<td class=n>\d+\.\d ms</td>", shown)  # each event's arrival time
    plain = failing.exchanges["greedy/ns"]
    big = dataclasses.replace(plain, body=b"x" * 100_000, bytes_received=100_000)
    shown = exchange_html("greedy/ns", big)
    assert shown.count("x" * 100) <= BODY_LIMIT // 100 + 1
    assert f"first {BODY_LIMIT:,} of 100,000 bytes shown" in shown


def test_a_flooding_server_leaves_each_exchange_a_bounded_size() -> None:
    """20,000 events of 2 KB and a hundred headers of 1 MB: the page shows a bounded part of
    each and says what it left out."""
    flood = frames(*(chunk(0, "x" * 2000) for _ in range(20_000)), done=False)
    exchange = dataclasses.replace(
        sse_exchange(flood, termination=Termination.EVENT_COUNT_LIMIT),
        headers=(("X-Bloat", "y" * 1_000_000),) * 100)
    shown = exchange_html("flood/s", exchange)
    assert len(shown) < 100_000, len(shown)
    assert "60 more headers not shown" in shown and "more characters)" in shown
    assert f"{len(exchange.events) - EVENT_LIMIT} more events not shown" in shown


def test_the_fuzz_report_is_one_file_with_its_findings(mock: EmbeddedMock, tmp_path: Path
                                                       ) -> None:
    path = tmp_path / "fuzz.html"
    out = io.StringIO()
    # seed 3: its 10 examples hold a stream (seed 5's no longer did once a quarter of the
    # valid bodies became aimed draws, conformance/strategies/focused.py)
    status = main(["fuzz", "--base-url", mock.openai_url, "--max-examples", "10",
                   "--seed", "3", "--workers", "1", "--phases", "fuzzing", "-q",
                   "--header", "X-Mock-Fault: usage-total-wrong", "--no-shrink",
                   "--html", str(path)], out=out, err=io.StringIO())
    assert status == 1, out.getvalue()
    html = path.read_text(encoding="utf-8")
    page = assert_self_contained(html)
    cells = page.by_class("a", "cell")
    assert "FAIL" in next(c for c in cells if c.attrs["href"] == "#USAGE-001").classes
    text = page.text["USAGE-001"]
    assert "fuzz/1: POST /completions" in text and "Reproduce" in text
    assert "seed: 3" in html and "time to first token" in html  # the fuzzed streams' latency


def test_the_report_of_a_real_server_replayed_is_one_file(tmp_path: Path) -> None:
    """llama-cpp-python's recorded answers (``tests/fixtures/lab/``), replayed by the mock:
    a real server's bodies and streams, its FAILs each leading to a finding."""
    fixtures = Path(__file__).resolve().parents[2] / "fixtures" / "lab"
    entry = yaml.safe_load((fixtures / "verdicts.yaml").read_text(encoding="utf-8"))[
        "llama-cpp-python-openai"]
    path = tmp_path / "lab.html"
    replay = ["--replay", str(fixtures / entry["fixture"]), "--replay-timing", "none"]
    with EmbeddedMock(replay) as server:
        base_url = server.openai_url.rsplit("/v1", 1)[0] + entry["base_path"]
        status = main(["run", "-q", "--base-url", base_url, *entry["args"], "--html", str(path)],
                      io.StringIO(), io.StringIO())
    assert status in (0, 1)
    page = assert_self_contained(path.read_text(encoding="utf-8"))
    failed = [c.attrs["href"] for c in page.by_class("a", "cell") if "FAIL" in c.classes]
    assert failed and set(failed) == {
        f"#{rule}" for rule, value in entry["rules"].items()
        if isinstance(value, dict) and value["verdict"] == "FAIL"}
    for href in failed:
        entry_tags = page.inner[str(href)[1:]]
        assert any("finding" in t.classes for t in entry_tags), href


# In a real browser: Debian's chromium, headless, driven by its command-line flags.

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium)")
SCREEN = (1280, 900)

PROBE = """<script>
(function(){
var out={height:window.innerHeight};
function bottom(e){return e?e.getBoundingClientRect().bottom+window.scrollY:null}
out.verdict=bottom(document.querySelector('.result'));
out.coverage=bottom(Array.from(document.querySelectorAll('table.meta th')).find(
  function(th){return th.textContent==='Coverage'}));
out.grid=bottom(document.querySelector('table.grid'));
out.charts=Array.from(document.querySelectorAll('svg.chart')).map(bottom);
out.filters=!document.getElementById('filters').hidden;
function click(id,then){window.addEventListener('hashchange',function h(){
  window.removeEventListener('hashchange',h);setTimeout(then,50)});
  document.querySelector('a.cell[href="#'+id+'"]').click()}
click('FAIL_ID',function(){
  var finding=document.getElementById('FAIL_ID').querySelector('.finding').getBoundingClientRect();
  out.finding_on_screen=finding.top>=0&&finding.top<window.innerHeight;
  click('PASS_ID',function(){
    out.pass_open=document.getElementById('PASS_ID').open;
    document.querySelector('#filters input[value=PASS]').click();
    out.pass_hidden=Array.from(document.querySelectorAll('details.rule.PASS')).every(
      function(d){return d.hidden});
    out.fail_shown=Array.from(document.querySelectorAll('details.rule.FAIL')).every(
      function(d){return !d.hidden});
    document.body.setAttribute('data-probe',JSON.stringify(out));
  });
});
})();
</script></body>"""


def chromium(*flags: str, page: Path, tmp_path: Path) -> str:
    """Run headless chromium on ``page`` (a file:// URL, offline) and return its stdout."""
    assert CHROMIUM is not None
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               "--no-first-run", "--disable-dev-shm-usage",
               f"--user-data-dir={tmp_path / 'profile'}",
               f"--window-size={SCREEN[0]},{SCREEN[1]}", *flags, page.as_uri()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=90, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@needs_chromium
def test_in_a_browser_a_click_on_a_cell_shows_its_rule(failing: RunResult, tmp_path: Path
                                                       ) -> None:
    """The first screen holds the verdict, coverage, grid and charts; clicking a FAIL cell
    brings its finding on screen, clicking a PASS cell opens its (closed) entry, and the
    verdict filter hides what it should."""
    passing = next(r.rule.id for r in failing.results if r.verdict is Verdict.PASS)
    probe = PROBE.replace("FAIL_ID", "USAGE-001").replace("PASS_ID", passing)
    page = tmp_path / "probed.html"
    page.write_text(html_report(failing).replace("</body>", probe), encoding="utf-8")
    dom = chromium("--virtual-time-budget=5000", "--dump-dom", page=page, tmp_path=tmp_path)
    found = re.search(r'data-probe="([^"]*)"', dom)
    assert found, dom[-2000:]
    seen = json.loads(unescape(found.group(1)))
    first_screen = seen["height"]  # the viewport: the window less any browser chrome
    assert 600 <= first_screen <= SCREEN[1], seen
    for what in ("verdict", "coverage", "grid"):
        assert 0 < seen[what] <= first_screen, (what, seen)
    assert len(seen["charts"]) == 2 and max(seen["charts"]) <= first_screen, seen
    assert seen["filters"] and seen["finding_on_screen"] and seen["pass_open"], seen
    assert seen["pass_hidden"] and seen["fail_shown"], seen


@needs_chromium
def test_in_a_browser_the_report_renders_offline(failing: RunResult, tmp_path: Path) -> None:
    """A screenshot of the first screen, kept under the test's tmp_path to look at."""
    page = tmp_path / "report.html"
    page.write_text(html_report(failing), encoding="utf-8")
    shot = tmp_path / "report.png"
    chromium(f"--screenshot={shot}", page=page, tmp_path=tmp_path)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == SCREEN and len(data) > 20_000  # not a blank page
