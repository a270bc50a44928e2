"""The pytest plugin: inert without --conformance-url; with it, the catalog runs as items."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conformance.embedded import EmbeddedMock

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
    (folder / "test_own.py").write_text(OWN_TEST)
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=",
               "--rootdir", str(folder), str(folder), "-rA", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=folder, timeout=120)


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
