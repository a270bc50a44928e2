"""The pytest plugin's ``--conformance-baseline``: accepted FAILs are xfail with the baseline's
reason, an accepted deviation that passes now is XPASS(strict), a FAIL the baseline does not
accept fails as without one. The same files and matching as ``conformance run --baseline``."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pytest
from test_plugin import pytest_in

from conformance.cli import main
from conformance.target.embedded import EmbeddedMock

RULES = ("--conformance-select", "USAGE-*")
BEFORE = "X-Mock-Fault: usage-before-finish"
BOTH = "X-Mock-Fault: usage-before-finish,usage-total-wrong"


@pytest.fixture(scope="module")
def baseline(mock: EmbeddedMock, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The YAML baseline of a run with ``usage-before-finish``: USAGE-005 accepted."""
    folder = tmp_path_factory.mktemp("plugin-baseline")
    report, accepted = folder / "fault.json", folder / "accepted.yaml"
    out, err = io.StringIO(), io.StringIO()
    status = main(["run", "-q", "--base-url", mock.openai_url, "--select", "USAGE-*",
                   "--header", BEFORE, "--json", str(report)], out, err)
    assert status == 1, err.getvalue()
    assert main(["baseline", str(report), "-o", str(accepted)], out, err) == 0
    accepted.write_text(accepted.read_text().replace(
        "the usage chunk comes before a finish chunk", "our proxy reorders the usage chunk"))
    return accepted


def run(folder: Path, mock: EmbeddedMock, baseline: Path, fault: str | None
        ) -> subprocess.CompletedProcess[str]:
    header = ("--conformance-header", fault) if fault else ()
    return pytest_in(folder, "--conformance-url", mock.openai_url, *RULES, *header,
                     "--conformance-baseline", str(baseline), "-k", "USAGE")


def test_an_accepted_failure_is_xfail_with_the_baselines_reason(
    mock: EmbeddedMock, baseline: Path, tmp_path: Path
) -> None:
    done = run(tmp_path, mock, baseline, BEFORE)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "XFAIL conformance::USAGE-005" in out and "our proxy reorders the usage chunk" in out
    assert "FAILED" not in out
    assert "no failure beyond the baseline" in out


def test_a_failure_the_baseline_does_not_accept_fails(
    mock: EmbeddedMock, baseline: Path, tmp_path: Path
) -> None:
    done = run(tmp_path, mock, baseline, BOTH)
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "XFAIL conformance::USAGE-005" in out
    assert "FAILED conformance::USAGE-001" in out and "Expected: " in out
    assert "not in the baseline: USAGE-001: these fail the run" in out


def test_a_fixed_deviation_is_xpass_strict_saying_the_baseline_can_shrink(
    mock: EmbeddedMock, baseline: Path, tmp_path: Path
) -> None:
    done = run(tmp_path, mock, baseline, None)
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "FAILED conformance::USAGE-005" in out and "XPASS(strict)" in out
    assert "remove USAGE-005/greedy/s from the baseline" in out
    assert "no longer failing (remove them from the baseline): USAGE-005/greedy/s" in out


def test_a_previous_report_is_a_baseline_too(
    mock: EmbeddedMock, baseline: Path, tmp_path: Path
) -> None:
    done = run(tmp_path, mock, baseline.with_name("fault.json"), BEFORE)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "XFAIL conformance::USAGE-005" in out
    assert "the usage chunk comes before a finish chunk" in out


def test_a_bad_baseline_is_one_usage_error(
    mock: EmbeddedMock, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("accepted: [USAGE-005]\n")
    done = run(tmp_path, mock, bad, BEFORE)
    assert done.returncode == 4, done.stdout + done.stderr
    assert "--conformance-baseline: the baseline" in done.stdout + done.stderr
