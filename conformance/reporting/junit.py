"""The JUnit XML report: one ``<testcase>`` per rule (h2spec's ``reporter/junit_report.go``).

FAIL becomes ``<failure>``, ERROR ``<error>``, SKIP ``<skipped>``; NON_STRICT is a
``<failure>`` under ``--strict`` and otherwise passes with the finding in ``<system-out>``.
A testcase's time is its rule's share of the run (:func:`~conformance.model.timing.rule_seconds`),
as in the pytest plugin's JUnit XML, so CI dashboards show which rules cost the run's time.
The testsuite carries the run's start (``timestamp``) and the harness's ``hostname``.
"""

from __future__ import annotations

import re
import socket
import xml.etree.ElementTree as ET
from datetime import timezone
from pathlib import Path

from conformance.model import RuleResult, RunResult, Verdict
from conformance.model.timing import rule_seconds

from .connection import connection_json
from .text import finding_lines

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    """``text`` with the characters XML 1.0 cannot hold shown as ``\\xNN`` escapes."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _details(result: RuleResult) -> str:
    return xml_safe("\n".join(f"{label}: {text}" for label, text in finding_lines(result)))


def _when_and_where(result: RunResult) -> dict[str, str]:
    """The testsuite's ``timestamp`` (the run's start in UTC, without an offset, as the JUnit
    XSD's pattern has it) and ``hostname`` (the machine that ran the harness)."""
    where = {"hostname": socket.gethostname() or "localhost"}
    if result.started_at is not None:
        start = result.started_at.astimezone(timezone.utc).replace(tzinfo=None)
        where["timestamp"] = start.isoformat(timespec="seconds")
    return where


def junit_xml(result: RunResult) -> str:
    counts = result.counts()
    failures = counts[Verdict.FAIL] + (counts[Verdict.NON_STRICT] if result.strict else 0)
    suites = ET.Element("testsuites")
    suite = ET.SubElement(
        suites,
        "testsuite",
        name=f"conformance.{result.target.profile_name}",
        tests=str(len(result.results)),
        failures=str(failures),
        errors=str(counts[Verdict.ERROR] + len(result.run_errors)),
        skipped=str(counts[Verdict.SKIP]),
        time=f"{result.stats.wall_seconds:.3f}",
    )
    for name, value in _when_and_where(result).items():
        suite.set(name, value)
    properties = ET.SubElement(suite, "properties")
    coverage = result.coverage
    values = [("coverage", coverage.line()),
              ("unjudged_must", ",".join(coverage.unjudged_must)),
              ("fail_on_skip", str(result.fail_on_skip).lower()),
              ("weakened", str(connection_json(result)["weakened"]).lower())]
    if result.search is not None:
        values += [("seed", str(result.search.seed)),
                   ("examples", str(result.search.examples)),
                   ("stop_reason", result.search.stop_reason)]
    for name, value in values:
        ET.SubElement(properties, "property", name=name, value=xml_safe(value))
    seconds = rule_seconds(result)
    for item in result.results:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"conformance.{item.rule.area}",
            name=f"{item.rule.id} {item.rule.title}",
            time=f"{seconds.get(item.rule.id, 0.0):.3f}",
        )
        verdict = item.verdict
        message = xml_safe(f"[{item.rule.level}] {item.message}"[:500])
        if verdict is Verdict.FAIL or (verdict is Verdict.NON_STRICT and result.strict):
            node = ET.SubElement(case, "failure", message=message, type=str(item.rule.level))
            node.text = _details(item)
        elif verdict is Verdict.ERROR:
            node = ET.SubElement(case, "error", message=message, type="ERROR")
            node.text = _details(item)
        elif verdict is Verdict.SKIP:
            ET.SubElement(case, "skipped", message=xml_safe(item.message[:500]))
        elif verdict is Verdict.NON_STRICT:
            ET.SubElement(case, "system-out").text = "NON_STRICT\n" + _details(item)
    for error in result.run_errors:
        case = ET.SubElement(suite, "testcase", classname="conformance.fuzz", name="harness")
        ET.SubElement(case, "error", message=xml_safe(error[:500]), type="ERROR")
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode")


def write_junit(result: RunResult, path: str | Path) -> None:
    Path(path).write_text(junit_xml(result) + "\n", encoding="utf-8")
