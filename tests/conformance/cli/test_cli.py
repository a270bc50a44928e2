"""The ``conformance`` command: listing, exit statuses, flags, and secrets kept out of output."""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.rules import CATALOG
from conformance.target.embedded import EmbeddedMock

SECRET_KEY = "sk-test-TOPSECRET-0001"
SECRET_HEADER = "hv-TOPSECRET-0002"


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_list_prints_one_rule_per_line_id_first() -> None:
    status, out, _ = cli("list")
    lines = out.splitlines()
    assert status == 0 and len(lines) == len(CATALOG)
    assert [line.split("\t")[0] for line in lines] == [r.id for r in CATALOG]
    _, friendli, _ = cli("list", "--profile", "friendli")
    assert "ECHO-001" not in friendli and "FRIENDLI-001" in friendli


def test_the_main_command_tests_the_embedded_mock() -> None:
    done = subprocess.run([sys.executable, "-m", "conformance", "run"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "embedded mock" in done.stdout and "PASSED" in done.stdout
    assert "starting the embedded mock" in done.stderr


def test_a_clean_server_exits_0(mock: EmbeddedMock) -> None:
    status, out, _ = cli("run", "--base-url", mock.openai_url, "-q", "--select", "USAGE-*")
    assert status == 0 and "PASSED" in out


def test_a_log_gets_one_line_per_probe_and_quiet_gets_none(mock: EmbeddedMock) -> None:
    args = ("run", "--base-url", mock.openai_url, "--select", "USAGE-*")
    status, _, err = cli(*args)
    probes = [line for line in err.splitlines() if line.startswith("conformance: probe ")]
    assert status == 0 and probes, err
    assert len(probes) == len(set(probes))  # one line each, none repeated
    assert all(line.count(": ") >= 2 for line in probes)  # the probe's name, then its outcome
    status, _, err = cli(*args, "-q")
    assert status == 0 and err == ""


def test_violations_exit_1_with_an_actionable_report(mock: EmbeddedMock) -> None:
    status, out, _ = cli("run", "--base-url", mock.openai_url, "-q",
                         "--header", "X-Mock-Fault: usage-total-wrong")
    assert status == 1 and "FAILED" in out
    for needle in ("FAIL: USAGE-001", "Requirement:", "Expected:", "Actual:", "Path:",
                   "usage.total_tokens", "Evidence:", "Reproduce:", "curl -sS"):
        assert needle in out, needle


def test_strict_turns_non_strict_into_a_failure(mock: EmbeddedMock) -> None:
    args = ("run", "--base-url", mock.openai_url, "-q", "--select", "PARAMS-*",
            "--header", "X-Mock-Fault: best-of-ignored")
    status, out, _ = cli(*args)
    assert status == 0 and "NON_STRICT: PARAMS-005" in out
    assert cli(*args, "--strict")[0] == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--profile", "nope"), "--profile 'nope' is unknown"),
        (("--profile", "/nonexistent.yaml"), "profile file not found: /nonexistent.yaml"),
        (("--header", "no colon here"), "--header expects"),
        (("--feature", "teleport"), "unknown feature"),
        (("--select", "NOPE-*"), "no rule matches"),
        (("--max-tokens", "1"), "--max-tokens must be at least 4"),
    ],
)
def test_usage_errors_exit_2(mock: EmbeddedMock, argv: tuple[str, ...], message: str) -> None:
    status, _, err = cli("run", "--base-url", mock.openai_url, "-q", *argv)
    assert status == 2 and message in err


def test_friendli_needs_a_model(mock: EmbeddedMock) -> None:
    status, _, err = cli("run", "--base-url", mock.friendli_url, "-q")
    assert status == 2 and "pass --model" in err and "endpoint id" in err
    status, out, _ = cli("run", "--base-url", mock.friendli_url, "-q",
                         "--model", "reference-ngram", "--select", "FRIENDLI-*")
    assert status == 0 and "profile friendli" in out


def test_an_unreachable_server_exits_2() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    status, _, err = cli("run", "--base-url", url, "-q", "--model", "m", "--timeout", "5")
    assert status == 2 and "cannot connect" in err


def test_max_requests_caps_the_run(mock: EmbeddedMock, tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    status, _, _ = cli("run", "--base-url", mock.openai_url, "-q", "--max-requests", "5",
                       "--json", str(report))
    data = json.loads(report.read_text())
    assert status == 0 and data["stats"]["requests"] <= 5 and data["summary"]["SKIP"] > 0


def test_select_and_deselect_take_globs(mock: EmbeddedMock, tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    cli("run", "--base-url", mock.openai_url, "-q", "--select", "SSE-*,FINISH-00*",
        "--deselect", "SSE-009", "--json", str(report))
    rules = [r["rule"] for r in json.loads(report.read_text())["results"]]
    assert "SSE-001" in rules and "FINISH-005" in rules and "SSE-009" not in rules
    assert not any(r.startswith("USAGE") for r in rules)


def test_secrets_never_reach_output_or_reports(mock: EmbeddedMock, tmp_path: Path) -> None:
    files = {name: tmp_path / name for name in ("r.json", "r.html", "r.xml")}
    status, out, err = cli(
        "run", "--base-url", mock.openai_url, "--api-key", SECRET_KEY,
        "--header", "X-Mock-Fault: stop-leak,usage-total-wrong",
        "--header", f"X-Team: {SECRET_HEADER}",
        "--json", str(files["r.json"]), "--html", str(files["r.html"]),
        "--junit-xml", str(files["r.xml"]),
    )
    assert status == 1
    texts = [out, err] + [path.read_text() for path in files.values()]
    for text in texts:
        assert SECRET_KEY not in text and SECRET_HEADER not in text
        assert "stop-leak,usage-total-wrong" not in text  # header values are redacted too
    assert '"Authorization: Bearer $OPENAI_API_KEY"' in out and '"X-Team: $X_TEAM"' in out
    assert "export OPENAI_API_KEY, X_MOCK_FAULT, X_TEAM" in out


def test_api_keys_come_from_the_environment(mock: EmbeddedMock, monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    monkeypatch.setenv("CONFORMANCE_API_KEY", SECRET_KEY)
    report = tmp_path / "r.json"
    cli("run", "--base-url", mock.openai_url, "-q", "--select", "MODELS-*",
        "--json", str(report))
    exchange = json.loads(report.read_text())["exchanges"]["models/list"]
    assert ["Authorization", "<redacted>"] in exchange["request"]["headers"]
    assert SECRET_KEY not in report.read_text()
