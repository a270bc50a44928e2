"""Each input format, told apart by content: HAR (plain and base64 bodies), VCR cassettes
(gzip'd ``!!binary`` bodies, plain strings, old header shapes, vcrpy's JSON), the harness's own
JSON reports, and directories of them."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from judge_support import (
    PLAIN_REQUEST,
    STREAM_REQUEST,
    clean_answer,
    clean_events,
    har_entry,
    interaction,
    sse,
    usage_before_finish,
    write_cassette,
    write_har,
)

from conformance.cli import main
from conformance.target.embedded import EmbeddedMock


def judge(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["judge", "-q", *args], out, err)
    return code, out.getvalue(), err.getvalue()


def report_of(*args: str, tmp_path: Path) -> tuple[int, dict[str, Any], str]:
    path = tmp_path / "judged.json"
    code, out, _ = judge(*args, "--json", str(path))
    return code, json.loads(path.read_text()), out


def judged_count(report: dict[str, Any], rule: str) -> str:
    return next(r["message"] for r in report["results"] if r["rule"] == rule)


def test_a_har_with_plain_and_base64_bodies(tmp_path: Path) -> None:
    har = write_har(tmp_path / "devtools.har", [
        har_entry(STREAM_REQUEST, sse(clean_events())),
        har_entry(STREAM_REQUEST, sse(clean_events()), base64_body=True),
        har_entry(PLAIN_REQUEST, json.dumps(clean_answer()), content_type="application/json",
                  base64_body=True),
    ])
    code, report, out = report_of(str(har), tmp_path=tmp_path)
    assert code == 0
    assert "read 1 HAR" in out
    assert judged_count(report, "SSE-005") == "2 recorded exchanges judged"
    assert judged_count(report, "SCHEMA-001") == "3 recorded exchanges judged"


def test_a_base64_body_with_a_deviation_is_decoded_and_flagged(tmp_path: Path) -> None:
    har = write_har(tmp_path / "b64.har", [
        har_entry(STREAM_REQUEST, sse(usage_before_finish(clean_events())), base64_body=True)])
    code, report, _ = report_of(str(har), tmp_path=tmp_path)
    assert code == 1
    assert [r["rule"] for r in report["results"] if r["verdict"] == "FAIL"] == ["USAGE-005"]


def test_a_cassette_with_a_gzipped_binary_body_and_a_plain_string_body(tmp_path: Path) -> None:
    cassette = write_cassette(tmp_path / "test_completions.yaml", [
        interaction(STREAM_REQUEST, sse(clean_events()), gzipped=True),
        interaction(PLAIN_REQUEST, json.dumps(clean_answer()), content_type="application/json"),
    ])
    assert "!!binary" in cassette.read_text()
    code, report, out = report_of(str(cassette), tmp_path=tmp_path)
    assert code == 0
    assert "read 1 cassette" in out
    assert judged_count(report, "SSE-005") == "1 recorded exchanges judged"
    assert judged_count(report, "SCHEMA-001") == "2 recorded exchanges judged"


def test_a_gzipped_cassette_body_with_a_deviation_is_flagged(tmp_path: Path) -> None:
    cassette = write_cassette(tmp_path / "bent.yaml", [
        interaction(STREAM_REQUEST, sse(usage_before_finish(clean_events())), gzipped=True)])
    code, report, out = report_of(str(cassette), tmp_path=tmp_path)
    assert code == 1
    assert f"{cassette} interactions[0]" in out
    assert [r["rule"] for r in report["results"] if r["verdict"] == "FAIL"] == ["USAGE-005"]


def test_old_vcrpy_shapes_headers_as_lists_and_a_body_as_a_string(tmp_path: Path) -> None:
    old = interaction(PLAIN_REQUEST, "", content_type="application/json")
    old["request"]["headers"] = [["Authorization", "Bearer sk-old"],
                                 ["Content-Type", "application/json"]]
    old["response"]["headers"] = {"Content-Type": "application/json"}  # a string, no list
    old["response"]["body"] = json.dumps(clean_answer())
    old["response"]["status"] = 200
    cassette = write_cassette(tmp_path / "old.yaml", [old])
    code, report, _ = report_of(str(cassette), tmp_path=tmp_path)
    assert code == 0
    assert judged_count(report, "SCHEMA-001") == "1 recorded exchanges judged"


def test_a_vcrpy_json_cassette(tmp_path: Path) -> None:
    cassette = tmp_path / "cassette.json"
    cassette.write_text(json.dumps({"interactions": [
        interaction(PLAIN_REQUEST, json.dumps(clean_answer()),
                    content_type="application/json")], "version": 1}))
    code, report, out = report_of(str(cassette), tmp_path=tmp_path)
    assert code == 0
    assert "read 1 cassette" in out
    assert judged_count(report, "SCHEMA-001") == "1 recorded exchanges judged"


def test_a_report_of_conformance_run_against_the_mock_judges_clean(
        tmp_path: Path, mock: EmbeddedMock) -> None:
    recorded = tmp_path / "run.json"
    assert main(["run", "-q", "--base-url", mock.openai_url, "--json", str(recorded)],
                io.StringIO(), io.StringIO()) == 0
    code, report, out = report_of(str(recorded), tmp_path=tmp_path)
    assert code == 0, [r["rule"] for r in report["results"] if r["verdict"] == "FAIL"]
    assert "read 1 report" in out
    assert "GET /v1/models" in out  # the discovery request: another path, named
    judged = {r["rule"] for r in report["results"] if r["verdict"] == "PASS"}
    assert {"SSE-005", "USAGE-005", "STOP-001", "ERRORS-001", "LOGPROBS-001"} <= judged


def test_a_directory_means_every_recording_under_it(tmp_path: Path) -> None:
    folder = tmp_path / "cassettes"
    (folder / "nested").mkdir(parents=True)
    write_cassette(folder / "a.yaml", [
        interaction(PLAIN_REQUEST, json.dumps(clean_answer()), content_type="application/json")])
    write_har(folder / "nested" / "b.har", [har_entry(STREAM_REQUEST, sse(clean_events()))])
    (folder / "README.md").write_text("# cassettes\n")
    (folder / "nested" / "notes.json").write_text('{"hello": 1}')
    code, report, out = report_of(str(folder), tmp_path=tmp_path)
    assert code == 0
    assert "read 1 cassette, 1 HAR" in out
    assert (f"skipped 2 files that are no recording: {folder}/README.md, "
            f"{folder}/nested/notes.json") in out
    assert judged_count(report, "SCHEMA-001") == "2 recorded exchanges judged"


def test_a_cassette_recorded_through_aiohttp_with_python_tags(tmp_path: Path) -> None:
    """vcrpy over aiohttp writes header names as ``istr`` objects: read as their strings,
    nothing constructed."""
    cassette = tmp_path / "aiohttp.yaml"
    answer = json.dumps(json.dumps(clean_answer()))
    cassette.write_text(f"""interactions:
- request:
    body: {json.dumps(json.dumps(PLAIN_REQUEST))}
    headers:
      ? !!python/object/apply:multidict._multidict.istr
      - Content-Type
      : - application/json
      ? !!python/object/apply:os.system
      - echo never run
      : - x
    method: POST
    uri: https://api.openai.com/v1/completions
  response:
    body:
      string: {answer}
    headers:
      ? !!python/object/apply:multidict._multidict.istr
      - Content-Type
      : - application/json
    status:
      code: 200
      message: OK
version: 1
""")
    code, report, _ = report_of(str(cassette), tmp_path=tmp_path)
    assert code == 0
    assert judged_count(report, "CONTENT-TYPE-002") == "1 recorded exchanges judged"


def test_a_ruby_vcr_cassette_with_a_base64_body(tmp_path: Path) -> None:
    import base64

    cassette = tmp_path / "ruby.yml"
    body = base64.b64encode(json.dumps(clean_answer()).encode()).decode()
    cassette.write_text(f"""---
http_interactions:
- request:
    method: post
    uri: https://api.openai.com/v1/completions
    body:
      encoding: UTF-8
      string: '{json.dumps(PLAIN_REQUEST)}'
    headers:
      Authorization:
      - Bearer sk-ruby
  response:
    status:
      code: 200
      message: OK
    headers:
      Content-Type:
      - application/json
    body:
      encoding: ASCII-8BIT
      base64_string: {body}
  recorded_at: Sun, 31 Mar 2024 20:12:02 GMT
recorded_with: VCR 6.2.0
""")
    code, report, out = report_of(str(cassette), tmp_path=tmp_path)
    assert code == 0
    assert "read 1 cassette" in out
    assert judged_count(report, "SCHEMA-001") == "1 recorded exchanges judged"


def test_a_polly_har_body_as_base64_pieces_of_gzip(tmp_path: Path) -> None:
    """Polly.js keeps the wire's gzip chunks as a JSON array of base64 pieces; ``size`` is
    the decoded length."""
    import base64
    import gzip

    raw = json.dumps(clean_answer()).encode()
    wire = gzip.compress(raw)
    pieces = [base64.b64encode(wire[:20]).decode(), base64.b64encode(wire[20:]).decode()]
    entry = har_entry(PLAIN_REQUEST, "", content_type="application/json")
    entry["response"]["content"] = {"encoding": "base64", "mimeType": "application/json",
                                    "size": len(raw), "text": json.dumps(pieces)}
    entry["response"]["headers"].append({"name": "content-encoding", "value": "gzip"})
    code, report, out = report_of(str(write_har(tmp_path / "polly.har", [entry])),
                                  tmp_path=tmp_path)
    assert code == 0, out
    assert judged_count(report, "SCHEMA-001") == "1 recorded exchanges judged"
