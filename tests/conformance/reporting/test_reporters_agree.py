"""Reporters read one result model: JSON, JUnit XML, HTML and the console agree on it."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET

import pytest
from harness_support import run_catalog

from conformance.model import RunResult
from conformance.reporting import html_report, junit_xml, report_json, write_console
from conformance.reporting.junit import xml_safe
from conformance.target.embedded import EmbeddedMock


@pytest.fixture(scope="module")
def failing(mock: EmbeddedMock) -> RunResult:
    return run_catalog(mock.openai_url, "openai",
                       faults=["usage-total-wrong", "text-after-finish", "best-of-ignored"])


def test_json_report_shape(failing: RunResult) -> None:
    data = json.loads(json.dumps(report_json(failing)))
    assert set(data["summary"]) == {"PASS", "FAIL", "NON_STRICT", "SKIP", "ERROR", "total"}
    assert data["summary"]["total"] == len(data["results"]) == len(failing.results)
    assert {"rule", "level", "verdict", "message"} <= set(data["results"][0])
    assert data["summary"]["FAIL"] >= 2 and data["passed"] is False and data["exit_code"] == 1
    stream = data["exchanges"]["greedy/s"]
    assert stream["sse_lines"] and stream["sse_lines"][0].startswith("data: ")
    assert stream["observations"] == [] and stream["events"][-1]["data"] == "[DONE]"
    assert "body" in data["exchanges"]["greedy/ns"]
    failed = next(r for r in data["results"] if r["rule"] == "USAGE-001")
    assert failed["finding"]["path"] == "usage.total_tokens"
    assert failed["finding"]["curl"].startswith("curl ")
    assert data["stats"]["time_to_first_token"]["count"] >= 1


def test_junit_has_one_testcase_per_rule(failing: RunResult) -> None:
    root = ET.fromstring(junit_xml(failing))
    cases = root.findall(".//testcase")
    assert len(cases) == len(failing.results)
    failures = [c for c in cases if c.find("failure") is not None]
    assert {c.get("name", "").split()[0] for c in failures} == {
        r.rule.id for r in failing.results if r.verdict.value == "FAIL"
    }
    non_strict = next(c for c in cases if c.get("name", "").startswith("PARAMS-005"))
    assert non_strict.find("failure") is None
    assert "NON_STRICT" in non_strict.findtext("system-out", "")
    assert any(c.find("skipped") is not None for c in cases)
    suite = root.find("testsuite")
    assert suite is not None and suite.get("tests") == str(len(cases))
    # a fast run rounds many shares to 0.000: a few distinct times, none holding the run
    times = [float(c.get("time", "0")) for c in cases]  # each rule's own share
    assert len(set(times)) > 2 and max(times) < sum(times) / 2
    assert sum(times) == pytest.approx(float(suite.get("time", "0")), abs=0.001 * len(cases))


def test_xml_safe_escapes_control_characters() -> None:
    assert xml_safe("a\x00b\x1bc\td") == "a\\x00b\\x1bc\td"


def test_html_is_self_contained(failing: RunResult) -> None:
    page = html_report(failing)
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"<(link|img|iframe)\b", page)
    assert not re.search(r"\bsrc\s*=", page)  # the one script is inline
    assert re.findall(r"\bhref\s*=\s*\"?([^\"\s>])", page) == ["#"] * page.count("href=")
    assert "Compatibility by area" in page and "USAGE-001" in page and "curl -sS" in page
    assert "&lt;" not in page or "<" in page  # escaped markup stays escaped


def test_console_report(failing: RunResult) -> None:
    out = io.StringIO()
    write_console(failing, out)
    text = out.getvalue()
    assert text.splitlines()[2].split() == ["area", "pass", "fail", "non-strict", "skip",
                                            "error"]
    assert "FAIL: USAGE-001" in text and "NON_STRICT: PARAMS-005" in text
    assert text.splitlines()[-1] == "FAILED"


def test_an_umbrella_rule_reports_every_failing_case(mock: EmbeddedMock) -> None:
    """ERRORS-001 over the invalid inputs: one finding per case that got 200, each with its
    exchange and curl, not the first alone (a user fixing one sees the others)."""
    result = run_catalog(mock.openai_url, "openai", faults=["invalid-input-200"])
    errors = next(r for r in result.results if r.rule.id == "ERRORS-001")
    cases = {finding.exchange for finding in errors.findings}
    assert len(cases) == len(errors.findings) >= 3
    assert errors.finding is errors.findings[0]
    assert all(finding.curl and finding.curl.startswith("curl ") for finding in errors.findings)
    data = json.loads(json.dumps(report_json(result)))
    reported = next(r for r in data["results"] if r["rule"] == "ERRORS-001")
    assert [f["exchange"] for f in reported["findings"]] == [f.exchange for f in errors.findings]
    out = io.StringIO()
    write_console(result, out)
    assert f"Case {len(cases)}:" in out.getvalue()
    junit = ET.fromstring(junit_xml(result)).findall(".//testcase")
    text = next(c for c in junit if c.get("name", "").startswith("ERRORS-001"))
    assert "Case 2:" in text.findtext("failure", "")
