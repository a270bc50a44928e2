"""``conformance fuzz``: flags, exit statuses, reports and replays, against the mock."""

from __future__ import annotations

import json
import socket
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from fuzz_support import run_cli

from conformance.target.embedded import EmbeddedMock

SMALL = ["--max-examples", "15", "--seed", "1", "--workers", "2", "-q"]
"""15 examples reach every shape a rule needs (echo with logprobs, n samples, ...) for some
seeds only; 1 does (so do 3 and 8; 2, 4-7 miss ECHO-002/003 or PARAMS-004), with the aimed
draws of conformance/strategies/focused.py. A seed draws the same wherever it runs
(conformance/fuzz/constants.py), so only a change to the document or the strategies moves it."""


@pytest.mark.parametrize(("flags", "message"), [
    (["--workers", "0"], "--concurrency must be at least 1"),  # --workers is its alias
    (["--concurrency", "65"], "--concurrency must be at most 64"),
    (["--max-tokens", "3"], "--max-tokens must be at least 4"),
    (["--time-budget", "-1"], "--time-budget must be positive"),
    (["--phases", "examples,stateful"], "--phases takes"),
    (["--profile", "nope"], "--profile 'nope' is unknown"),
    (["--header", "no colon"], "--header expects"),
    (["--base-url", "http://127.0.0.1:9/dedicated/v1"], "has no model listing: pass --model"),
])
def test_usage_errors_exit_2_and_name_the_flag(flags: list[str], message: str) -> None:
    status, out, err = run_cli(["fuzz", *flags])
    assert status == 2, err
    assert message in err and out == ""


def test_an_unreachable_target_exits_2() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    status, _, err = run_cli(["fuzz", "--base-url", f"http://127.0.0.1:{port}/v1", "--model",
                              "m", "--max-examples", "2", "--phases", "fuzzing", "-q",
                              "--timeout", "5"])
    assert status == 2
    assert "cannot connect" in err


def test_the_clean_mock_passes_and_the_reports_say_so(mock: EmbeddedMock, tmp_path: Path
                                                      ) -> None:
    report, junit = tmp_path / "fuzz.json", tmp_path / "fuzz.xml"
    status, out, _ = run_cli(["fuzz", "--base-url", mock.openai_url, *SMALL,
                              "--json", str(report), "--junit-xml", str(junit)])
    assert status == 0, out
    assert "seed: 1" in out and out.rstrip().endswith("PASSED")
    data = json.loads(report.read_text())
    assert data["search"]["seed"] == 1 and data["exit_code"] == 0 and data["passed"]
    assert data["stats"]["requests"] >= data["search"]["examples"] > 50
    verdicts = {result["rule"]: result["verdict"] for result in data["results"]}
    assert set(verdicts.values()) == {"PASS"}
    assert {"FUZZ-001", "FUZZ-003", "SCHEMA-001", "SSE-005"} <= set(verdicts)
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "0"
    assert len(suite.findall("testcase")) == len(verdicts)
    assert suite.find("properties/property[@name='seed']").get("value") == "1"  # type: ignore[union-attr]


def test_the_clean_mock_passes_on_the_friendli_route(mock: EmbeddedMock) -> None:
    status, out, _ = run_cli(["fuzz", "--base-url", mock.friendli_url, "--model",
                              "reference-ngram", *SMALL, "--phases", "examples,fuzzing"])
    assert status == 0, out


def test_a_seed_replays_the_run(mock: EmbeddedMock) -> None:
    flags = ["fuzz", "--base-url", mock.openai_url, "--max-examples", "10", "--seed", "5",
             "--workers", "1", "--phases", "fuzzing", "-q",
             "--header", "X-Mock-Fault: usage-total-wrong", "--no-shrink"]
    first, second = run_cli(flags), run_cli(flags)
    assert first[0] == second[0] == 1
    curl = [line for line in first[1].splitlines() if "curl " in line]
    assert curl and curl == [line for line in second[1].splitlines() if "curl " in line]


def test_the_request_budget_stops_the_run(mock: EmbeddedMock) -> None:
    status, out, _ = run_cli(["fuzz", "--base-url", mock.openai_url, *SMALL,
                              "--max-requests", "30"])
    assert status == 0, out
    assert "requests: 30 " in out and "request budget of 30 spent" in out


def test_the_api_key_never_appears(mock: EmbeddedMock, tmp_path: Path) -> None:
    report = tmp_path / "fuzz.json"
    status, out, err = run_cli(["fuzz", "--base-url", mock.openai_url, "--max-examples", "5",
                                "--seed", "1", "--phases", "fuzzing", "--api-key", "sk-SECRET",
                                "--header", "X-Mock-Fault: usage-total-wrong", "-q",
                                "--json", str(report)])
    assert status == 1
    data = json.loads(report.read_text())
    for result in data["results"]:
        del result["faults"]  # the catalog's own record names the fault: not a leak
    for text in (out, err, json.dumps(data)):
        assert "sk-SECRET" not in text and "usage-total-wrong" not in text
    assert '-H "Authorization: Bearer $OPENAI_API_KEY"' in out
    assert '-H "X-Mock-Fault: $X_MOCK_FAULT"' in out


def test_a_fuzz_report_charts_the_latency_of_the_streams_it_read(tmp_path: Path) -> None:
    report, html = tmp_path / "fuzz.json", tmp_path / "fuzz.html"
    with EmbeddedMock(["--ttft-ms", "60", "--itl-ms", "15"]) as slow:
        status, out, _ = run_cli(["fuzz", "--base-url", slow.openai_url, "--max-examples", "4",
                                  "--seed", "3", "-q", "--phases", "examples,fuzzing",
                                  "--json", str(report), "--html", str(html)])
    assert status == 0, out
    stats = json.loads(report.read_text())["stats"]
    first, gaps = stats["time_to_first_token"], stats["inter_token_latency"]
    assert first["count"] >= 1 and first["median_s"] >= 0.06, first  # counted from the request
    assert gaps["count"] >= 1 and 0.01 <= gaps["median_s"] < 0.2, gaps
    page = html.read_text()
    assert "time to first token" in page and "inter-token gap" in page and "<svg" in page
