"""The JSON report has a schema in the package (``report.schema.json``), a ``format_version``
and the run's start; JUnit's testsuite carries ``timestamp`` and ``hostname`` (issue 34).

Every report a test writes under ``tmp_path`` is also checked against the schema by
``tests/conftest.py``; the tests here check reports built in memory, the ones no CLI writes."""

from __future__ import annotations

import json
import socket
import xml.etree.ElementTree as ET
from datetime import datetime, timedelta, timezone
from pathlib import Path

import jsonschema
import pytest
from harness_support import chunk, frames, run_catalog, sse_exchange
from report_checks import check_report, schema_errors

from conformance.model import Level, RunResult, RunStats, Target, Verdict
from conformance.model.coverage import SKIP_GROUPS
from conformance.model.verdicts import SourceKind
from conformance.reporting import junit_xml, report_json, report_schema
from conformance.reporting.json_report import FORMAT_VERSION
from conformance.rules import CATALOG
from conformance.target.embedded import EmbeddedMock
from conformance.transport import Exchange, RecordedRequest, Termination, Timings

REPO = Path(__file__).resolve().parents[3]
TARGET = Target("http://127.0.0.1:1/v1", "openai", "m", ())


@pytest.fixture(scope="module")
def clean(mock: EmbeddedMock) -> RunResult:
    return run_catalog(mock.openai_url, "openai")


def as_json(result: RunResult) -> dict:
    return json.loads(json.dumps(report_json(result)))


def test_the_schema_is_a_schema_and_ships_with_the_package() -> None:
    schema = report_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    shipped = project["tool"]["setuptools"]["package-data"]["conformance"]
    assert "reporting/report.schema.json" in shipped


def test_the_schema_names_what_the_model_names() -> None:
    """The schema's enumerations are the model's: a new verdict or termination fails here,
    not in a consumer."""
    defs = report_schema()["$defs"]
    result = defs["result"]["properties"]
    assert result["verdict"]["enum"] == [str(v) for v in Verdict]
    assert result["level"]["enum"] == [str(level) for level in Level]
    assert result["source"]["enum"] == [str(kind) for kind in SourceKind]
    assert defs["exchange"]["properties"]["termination"]["enum"] == [str(t) for t in Termination]
    skipped = report_schema()["properties"]["coverage"]["properties"]["skipped"]
    assert tuple(skipped["required"]) == SKIP_GROUPS
    pattern = defs["rule_id"]["pattern"]
    assert all(jsonschema.Draft202012Validator({"pattern": pattern}).is_valid(rule.id)
               for rule in CATALOG)


def test_a_clean_run_s_report_matches_the_schema_with_its_version_and_start(
    mock: EmbeddedMock,
) -> None:
    before = datetime.now(timezone.utc)
    result = run_catalog(mock.openai_url, "openai", select=["USAGE-*", "SSE-*"])
    data = as_json(result)
    check_report(data)
    assert data["format_version"] == FORMAT_VERSION == "1.1"
    started = datetime.fromisoformat(data["started_at"].replace("Z", "+00:00"))
    assert data["started_at"].endswith("Z")
    assert before - timedelta(seconds=1) <= started <= datetime.now(timezone.utc)


def test_the_schema_refuses_what_a_consumer_could_not_read(clean: RunResult) -> None:
    """The check is not vacuous: a report without its version, with an unknown field or a
    verdict outside the five fails it."""
    data = as_json(clean)
    assert not schema_errors(data)
    assert schema_errors({k: v for k, v in data.items() if k != "format_version"})
    assert schema_errors({**data, "extra": 1})
    broken = json.loads(json.dumps(data))
    broken["results"][0]["verdict"] = "OK"
    assert schema_errors(broken)
    label = next(iter(broken["exchanges"]))
    broken = json.loads(json.dumps(data))
    broken["exchanges"][label]["body_tail"] = "tail without body_cut"
    assert schema_errors(broken)


def test_a_report_of_cut_and_binary_bodies_matches_the_schema() -> None:
    """The shapes only a hostile server brings: a stream cut at a harness limit (head, tail,
    ``body_cut``, ``events_omitted``), a body that is not UTF-8 (``_base64`` forms, head and
    tail), an exchange that never got an answer, and requests refused as a whole."""
    flood = frames(*(chunk(0, "x") for _ in range(2_000)), done=False)
    binary = bytes(range(256)) * 400
    request = RecordedRequest("POST", "http://127.0.0.1:1/v1/completions", (), b"\xff{")
    exchanges = {
        "flood/s": sse_exchange(flood, termination=Termination.EVENT_COUNT_LIMIT),
        "binary/ns": Exchange(request=request, termination=Termination.EOF,
                              timings=Timings(0.0, 0.01, 0.01, 0.5), status=200, body=binary,
                              bytes_received=len(binary), chunks=((len(binary), 0.5),)),
        "silent/ns": Exchange(request=request, termination=Termination.CONNECT_ERROR,
                              timings=Timings(0.0), error="connection refused"),
    }
    stats = RunStats(requests=3, wall_seconds=0.5, ttft_seconds=(0.1,), completions=3,
                     refused=(("no-answer", 1, "silent/ns"), ("rate-limited", 2, "binary/ns")))
    result = RunResult(TARGET, (), exchanges, stats,
                       started_at=datetime(2026, 1, 31, 9, 0, tzinfo=timezone.utc))
    data = as_json(result)
    check_report(data)
    assert data["started_at"] == "2026-01-31T09:00:00.000Z"
    assert data["exchanges"]["flood/s"]["events_omitted"] > 0
    assert {"body_base64", "body_tail_base64", "body_cut"} <= set(data["exchanges"]["binary/ns"])
    assert data["exchanges"]["silent/ns"]["status"] is None
    assert data["stats"]["refused"]["rate-limited"] == {"count": 2, "first": "binary/ns"}


def test_a_result_not_built_by_a_run_has_no_start() -> None:
    data = as_json(RunResult(TARGET, ()))
    check_report(data)
    assert data["started_at"] is None
    suite = ET.fromstring(junit_xml(RunResult(TARGET, ()))).find("testsuite")
    assert suite is not None and suite.get("timestamp") is None


def test_junit_says_when_and_where_the_run_ran(clean: RunResult) -> None:
    suite = ET.fromstring(junit_xml(clean)).find("testsuite")
    assert suite is not None and clean.started_at is not None
    assert suite.get("hostname") == socket.gethostname()
    stamp = suite.get("timestamp", "")
    # the JUnit XSD's pattern: no offset (it is UTC), whole seconds
    assert datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S") == (
        clean.started_at.astimezone(timezone.utc).replace(tzinfo=None, microsecond=0))
