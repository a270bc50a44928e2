"""The pytest plugin: inert without --conformance-url; with it, the catalog runs as items."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance.target.embedded import EmbeddedMock

OWN_TEST = '''
def test_my_own_rule(conformance_client, conformance_profile):
    exchange = conformance_client.complete({"prompt": "Hi", "max_tokens": 4})
    assert exchange.status == 200 and conformance_profile.name == "openai"
    view = conformance_client.stream({"prompt": "Hi", "max_tokens": 4})
    assert view.dones and view.chunks


def test_the_catalog_result(conformance_result):
    assert conformance_result.target.model == "reference-ngram"
'''


def pytest_in(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run pytest on ``folder`` with our plugin loaded by its entry-point name and no other
    (the environment's schemathesis and hypothesis plugins take 1.5 s to import, per run)."""
    (folder / "test_own.py").write_text(OWN_TEST)
    command = [sys.executable, "-m", "pytest", "-p", "conformance", "-p", "no:cacheprovider",
               "-o", "addopts=", "--rootdir", str(folder), str(folder), "-rA", *args]
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    return subprocess.run(command, capture_output=True, text=True, cwd=folder, timeout=120,
                          env=env)


def test_importing_the_plugin_is_cheap() -> None:
    code = ("import sys, conformance.pytest_plugin; "
            "heavy = [m for m in ('aiohttp', 'jsonschema', 'conformance.rules', 'spec') "
            "if m in sys.modules]; print(heavy)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=60)
    assert done.stdout.strip() == "[]"


def test_without_a_url_the_plugin_adds_nothing(tmp_path: Path) -> None:
    done = pytest_in(tmp_path)
    assert "conformance::" not in done.stdout
    assert "2 skipped" in done.stdout and "need --conformance-url" in done.stdout


def test_the_catalog_runs_as_items(mock: EmbeddedMock, tmp_path: Path) -> None:
    done = pytest_in(tmp_path, "--conformance-url", mock.openai_url,
                     "--conformance-select", "USAGE-*,PARAMS-005",
                     "--conformance-header", "X-Mock-Fault: usage-total-wrong,best-of-ignored")
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "PASSED test_own.py::test_my_own_rule" in out
    assert "PASSED test_own.py::test_the_catalog_result" in out
    assert "FAILED conformance::USAGE-001" in out and "Expected: " in out
    assert "XFAIL conformance::PARAMS-005" in out and "NON_STRICT" in out
    assert "PASSED conformance::USAGE-002" in out
    assert "USAGE-009" not in out  # FriendliAI's rule is not in the openai selection


def test_level_markers_select_items(mock: EmbeddedMock, tmp_path: Path) -> None:
    done = pytest_in(tmp_path, "--conformance-url", mock.openai_url,
                     "--conformance-select", "USAGE-*", "-m", "conformance_should")
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "conformance::USAGE-010" in out and "conformance::USAGE-001" not in out


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def assert_one_usage_error(done: subprocess.CompletedProcess[str], *wanted: str) -> str:
    """Exit status 4, one ``ERROR:`` line holding ``wanted``, no traceback, a short output."""
    out = done.stdout + done.stderr
    errors = [line for line in out.splitlines() if line.startswith("ERROR")]
    assert done.returncode == 4, out[-3000:]
    assert len(errors) == 1, out[-3000:]
    assert all(text in errors[0] for text in wanted), errors[0]
    assert "Traceback" not in out and "INTERNALERROR" not in out and "FAILED" not in out
    assert len(out.splitlines()) < 20, out[-3000:]
    return errors[0]


def test_an_unreachable_target_is_one_usage_error(tmp_path: Path) -> None:
    done = pytest_in(tmp_path, "--conformance-url", f"http://127.0.0.1:{closed_port()}/v1")
    assert_one_usage_error(done, "connection refused", "--conformance-base-url")


@pytest.mark.parametrize(("args", "wanted"), [
    (("--conformance-profile", "opnai"), "--conformance-profile 'opnai' is unknown"),
    (("--conformance-header", "no colon"), "--conformance-header expects 'Name: value'"),
    (("--conformance-select", "NOPE-*"), "no rule matches --conformance-select"),
])
def test_a_bad_option_is_one_usage_error_before_any_request(
    tmp_path: Path, args: tuple[str, ...], wanted: str
) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"  # checked before the target is reached
    assert_one_usage_error(pytest_in(tmp_path, "--conformance-url", url, *args), wanted)


def test_a_base_url_that_is_not_a_url_is_one_usage_error(tmp_path: Path) -> None:
    done = pytest_in(tmp_path, "--conformance-url", "notaurl")
    assert_one_usage_error(done, "--conformance-base-url 'notaurl' is not a URL")


def test_a_refused_api_key_is_one_usage_error(tmp_path: Path) -> None:
    with EmbeddedMock(["--api-key", "sk-plugin"]) as locked:
        wrong = pytest_in(tmp_path, "--conformance-url", locked.openai_url,
                          "--conformance-api-key", "sk-wrong")
        assert_one_usage_error(wrong, "refused the API key", "HTTP 401",
                               "pass --conformance-api-key")
        right = pytest_in(tmp_path, "--conformance-url", locked.openai_url,
                          "--conformance-api-key", "sk-plugin", "--conformance-select", "USAGE-*")
        assert right.returncode == 0, right.stdout[-3000:]


def test_a_rate_limited_run_is_one_usage_error(tmp_path: Path) -> None:
    """The first run's first request passes, then the rate limit refuses nearly every
    completion: the catalog's verdicts would mean nothing, so the session ends with
    refused_run's line. A second run within the minute is refused at its first request."""
    with EmbeddedMock(["--rate-limit-rpm", "3"]) as limited:
        args = ("--conformance-url", limited.openai_url, "--conformance-retries", "0")
        catalog = pytest_in(tmp_path, *args)
        first = pytest_in(tmp_path, *args)
    assert_one_usage_error(catalog, "too many to judge", "--conformance-retries")
    assert_one_usage_error(first, "rate-limits this client (429)", "of the first request")


def test_items_are_collected_and_timed_by_their_own_rule(tmp_path: Path) -> None:
    """``collected N items`` counts the rules, and each JUnit testcase's time is its rule's
    share of the catalog run (they add up to it), not 0 with the whole run on the first."""
    with EmbeddedMock(["--ttft-ms", "20", "--itl-ms", "2"]) as slow:
        done = pytest_in(tmp_path, "--conformance-url", slow.openai_url,
                         "--junitxml", str(tmp_path / "junit.xml"))
    assert done.returncode == 0, done.stdout[-3000:]
    suite = ET.parse(tmp_path / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    cases = list(suite.iter("testcase"))
    collected = re.search(r"^collected (\d+) items$", done.stdout, re.MULTILINE)
    assert collected is not None, done.stdout[:2000]
    assert int(collected[1]) == len(cases) == int(suite.get("tests", "0"))
    rules = [float(case.get("time", "0")) for case in cases
             if case.get("classname", "").startswith("conformance")]
    assert len(rules) == len(cases) - 2 > 0  # all but the two tests of test_own.py
    total, session = sum(rules), float(suite.get("time", "0"))
    assert len(set(rules)) > 5 and max(rules) < total / 2
    assert 0.5 * session < total <= session + 0.01
