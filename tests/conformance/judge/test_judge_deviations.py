"""A clean recorded exchange gives no violation; the same exchange with one named deviation
written in is flagged by exactly the rule that owns it."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from judge_support import (
    DEVIATIONS,
    PLAIN_REQUEST,
    STREAM_REQUEST,
    TEXTS,
    chunk,
    clean_answer,
    clean_events,
    har_entry,
    sse,
    write_har,
)

from conformance.cli import main


def judged(path: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    """Exit status, the JSON report and stdout of ``conformance judge PATH``."""
    report = path.with_suffix(".report.json")
    out, err = io.StringIO(), io.StringIO()
    code = main(["judge", "-q", str(path), "--json", str(report), *args], out, err)
    assert err.getvalue() == ""
    return code, json.loads(report.read_text()), out.getvalue()


def failing(report: dict[str, Any]) -> set[str]:
    return {r["rule"] for r in report["results"] if r["verdict"] in ("FAIL", "NON_STRICT")}


def test_a_clean_stream_and_answer_pass_every_rule_they_reach(tmp_path: Path) -> None:
    har = write_har(tmp_path / "clean.har", [
        har_entry(STREAM_REQUEST, sse(clean_events())),
        har_entry(PLAIN_REQUEST, json.dumps(clean_answer()), content_type="application/json"),
    ])
    code, report, _ = judged(har)
    assert code == 0, failing(report)
    verdicts = {r["rule"]: r["verdict"] for r in report["results"]}
    for rule in ("SSE-005", "USAGE-005", "FINISH-003", "FINISH-004", "SCHEMA-001", "USAGE-001"):
        assert verdicts[rule] == "PASS", rule


@pytest.mark.parametrize("deviation", sorted(DEVIATIONS))
def test_one_deviation_is_flagged_by_exactly_its_rule(tmp_path: Path, deviation: str) -> None:
    bend, rule = DEVIATIONS[deviation]
    har = write_har(tmp_path / "bent.har", [
        har_entry(STREAM_REQUEST, sse(bend(clean_events())), comment=deviation)])
    code, report, out = judged(har)
    assert code == 1
    assert failing(report) == {rule}
    finding = next(r for r in report["results"] if r["rule"] == rule)["finding"]
    assert finding["exchange"] == f'{har} log.entries[0] ("{deviation}")'
    assert f"{har} log.entries[0]" in out


def test_a_stop_string_in_the_text_is_flagged_by_the_stop_rule(tmp_path: Path) -> None:
    events = [chunk(TEXTS[0]), chunk(TEXTS[1]), chunk(TEXTS[2], "stop"), "[DONE]"]
    plain = {**{k: v for k, v in STREAM_REQUEST.items() if k != "stream_options"}}
    kept = write_har(tmp_path / "kept.har", [har_entry({**plain, "stop": ["xyz"]}, sse(events))])
    assert judged(kept)[0] == 0
    leaked = write_har(tmp_path / "leaked.har", [
        har_entry({**plain, "stop": [" world"]}, sse(events))])
    code, report, _ = judged(leaked)
    assert code == 1
    assert failing(report) == {"STOP-001"}


def test_a_refused_request_is_judged_only_as_a_refusal(tmp_path: Path) -> None:
    """A valid request answered 500 with a bare text body: the error-shape rules fail it, and
    no content rule is judged on it (none PASSes on it)."""
    har = write_har(tmp_path / "refused.har", [
        har_entry(STREAM_REQUEST, "upstream exploded", status=500, content_type="text/plain")])
    code, report, _ = judged(har)
    assert code == 1
    assert failing(report) == {"ERRORS-003", "CONTENT-TYPE-003"}
    passed = {r["rule"] for r in report["results"] if r["verdict"] == "PASS"}
    assert passed == set()


def test_a_refused_request_with_the_envelope_passes_the_error_rules(tmp_path: Path) -> None:
    envelope = {"error": {"message": "This model's maximum context length is 4097 tokens",
                          "type": "invalid_request_error", "param": None, "code": None}}
    har = write_har(tmp_path / "refused.har", [
        har_entry(PLAIN_REQUEST, json.dumps(envelope), status=400,
                  content_type="application/json")])
    code, report, _ = judged(har)
    assert code == 0
    passed = {r["rule"] for r in report["results"] if r["verdict"] == "PASS"}
    assert passed == {"ERRORS-003", "CONTENT-TYPE-003"}
