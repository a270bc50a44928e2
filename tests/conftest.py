"""Hooks and fixtures every test shares: the JSON reports a test writes match the shipped
schema, and no test writes to the summary of the CI job it runs in."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from report_checks import ReportChecker

CHECKER = ReportChecker()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """After a test that passed using ``tmp_path``: every JSON report in it matches the
    schema, or the test fails saying where not."""
    result = yield
    tmp_path = getattr(item, "funcargs", {}).get("tmp_path")
    if isinstance(tmp_path, Path):
        CHECKER.check_under([tmp_path])
    return result


@pytest.fixture(scope="session", autouse=True)
def reports_in_shared_directories(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """At the end, the reports under the session's temporary directories that no test's own
    check saw (those of module- and session-scoped fixtures)."""
    yield
    CHECKER.check_under([tmp_path_factory.getbasetemp()])


@pytest.fixture(autouse=True)
def no_step_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    """``$GITHUB_STEP_SUMMARY`` unset: on GitHub Actions every run a test makes would
    otherwise append its Markdown summary to the job's page."""
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
