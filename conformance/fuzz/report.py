"""Reports of a fuzz run: console, JSON and JUnit XML, each only reading a :class:`FuzzResult`.

The console shows the seed first (``--seed`` replays the run exactly), then each finding with
its check, what broke, and a curl command that reproduces it as pasted: secrets are shell
variables (``$OPENAI_API_KEY``, one per ``--header``), never values.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TextIO

from conformance.reporting.connection import network_json, network_lines
from conformance.reporting.junit import xml_safe
from conformance.transport import DIRECT
from spec import JSON

from .engine import FuzzResult
from .findings import FuzzFinding

_VARIABLE = re.compile(r"\$([A-Z_][A-Z0-9_]*)")


def _variables(findings: list[FuzzFinding]) -> list[str]:
    names = {name for finding in findings for name in _VARIABLE.findall(finding.curl)}
    return sorted(names)


def _headline(finding: FuzzFinding) -> str:
    tags = [finding.operation]
    if finding.mode:
        tags.append(f"{finding.mode} data")
    if finding.status is not None:
        tags.append(f"HTTP {finding.status}")
    tags.append("shrunk" if finding.shrunk else "as found")
    name = finding.title if finding.rule_id else f"{finding.check}: {finding.title}"
    return f"FAIL {name}  [{', '.join(tags)}]"


def write_console(result: FuzzResult, out: TextIO, *, embedded: bool = False) -> None:
    where = "the embedded mock" if embedded else result.base_url
    out.write(f"conformance fuzz: profile {result.profile} at {where}\n")
    for line in network_lines(result.network if result.network != DIRECT else None):
        out.write(f"{line}\n")
    out.write(f"seed: {result.seed}  (add --seed {result.seed} to replay this run)\n")
    rules = [name for name in result.checks if name[:1].isupper()]
    out.write(f"checks: {len(result.checks) - len(rules)} schemathesis checks, "
              f"{len(rules)} rules ({', '.join(rules)})\n")
    out.write(f"examples: {result.examples}, requests: {result.requests} "
              f"({result.retried} retried after 429/503), {result.duration:.1f} s, "
              f"stopped: {result.stop_reason}\n")
    for finding in result.findings:
        out.write(f"\n{_headline(finding)}\n")
        for line in finding.message.strip().splitlines():
            out.write(f"  {line}\n")
        out.write(f"  reproduce:\n    {finding.curl}\n")
    variables = _variables(result.findings)
    if variables:
        out.write(f"\n(export {', '.join(variables)} before pasting a curl command)\n")
    for error in result.errors:
        out.write(f"\nERROR {error}\n")
    verdict = {0: "nothing found", 1: f"{len(result.findings)} finding(s)",
               2: "the run itself failed"}[result.exit_code]
    out.write(f"\n{verdict} (exit status {result.exit_code})\n")


def report_json(result: FuzzResult) -> dict[str, JSON]:
    return {
        "tool": "conformance fuzz",
        "profile": result.profile,
        "base_url": result.base_url,
        "connection": network_json(result.network),
        "seed": result.seed,
        "checks": list(result.checks),
        "examples": result.examples,
        "requests": result.requests,
        "retried": result.retried,
        "duration_seconds": round(result.duration, 3),
        "stop_reason": result.stop_reason,
        "findings": [finding.as_json() for finding in result.findings],
        "errors": list(result.errors),
        "exit_code": result.exit_code,
    }


def write_json(result: FuzzResult, path: str | Path) -> None:
    text = json.dumps(report_json(result), indent=2, ensure_ascii=False)
    Path(path).write_text(text + "\n", encoding="utf-8")


def junit_xml(result: FuzzResult) -> str:
    """One ``<testcase>`` per check that ran; a finding is its ``<failure>``."""
    by_check: dict[str, list[FuzzFinding]] = {}
    for finding in result.findings:
        by_check.setdefault(finding.rule_id or finding.check, []).append(finding)
    names = list(result.checks) + [name for name in by_check if name not in result.checks]
    suites = ET.Element("testsuites")
    suite = ET.SubElement(
        suites, "testsuite", name=f"conformance.fuzz.{result.profile}", tests=str(len(names)),
        failures=str(len(by_check)), errors=str(len(result.errors)),
        time=f"{result.duration:.3f}",
    )
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="seed", value=str(result.seed))
    ET.SubElement(properties, "property", name="weakened",
                  value=str(result.network.weakened).lower())
    for name in names:
        case = ET.SubElement(suite, "testcase", classname="conformance.fuzz", name=name, time="0")
        for finding in by_check.get(name, []):
            node = ET.SubElement(case, "failure", message=xml_safe(finding.title[:500]),
                                 type=finding.severity)
            node.text = xml_safe(f"{finding.operation}\n{finding.message}\n\n{finding.curl}")
    for error in result.errors:
        case = ET.SubElement(suite, "testcase", classname="conformance.fuzz", name="harness")
        ET.SubElement(case, "error", message=xml_safe(error[:500]), type="ERROR")
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode")


def write_junit(result: FuzzResult, path: str | Path) -> None:
    Path(path).write_text(junit_xml(result) + "\n", encoding="utf-8")
