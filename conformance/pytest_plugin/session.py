"""The hooks of the pytest plugin once it is active (``--conformance-url`` given).

:mod:`conformance.pytest_plugin` registers this module in ``pytest_configure`` only when a
target is named, so a pytest run without one never imports it. The hooks make the catalog
behave like any other tests:

- ``pytest_sessionstart`` checks the options and reaches the target once, before the header
  and before collection: a wrong option, an unreachable target, a refused key or a
  rate-limited first request is one ``ERROR:`` line and exit status 4, the line
  ``conformance run`` prints, not a traceback per rule.
- ``pytest_make_collect_report`` adds the catalog's collector under the session, so its items
  are collected (and counted: ``collected 74 items``) like any test's.
- ``pytest_runtestloop`` runs the catalog once, before the first item, when any rule item is
  left after ``-k`` / ``-m`` / ``--deselect``.
- ``pytest_terminal_summary`` says, under ``--conformance-baseline``, which accepted
  deviations no longer fail (so the file can shrink) and which failures it does not accept.
- ``pytest_runtest_makereport`` gives each rule item its share of the run's time, which the
  JUnit XML (``--junitxml``) and ``--durations`` read.
"""

from __future__ import annotations

from collections.abc import Generator

import pytest

from conformance.compare.baseline import outcome_lines
from conformance.pytest_plugin.support import (
    RESULT_KEY,
    RuleItem,
    baseline_outcome,
    catalog_result,
    check_options,
    rule_collector,
    settings_for,
)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Check the options, then make the first contact (not for ``--collect-only``, which
    sends nothing). An xdist worker skips both: its controller checked already."""
    config = session.config
    if hasattr(config, "workerinput"):
        return
    check_options(config)
    if not config.option.collectonly:
        settings_for(config)


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    """Add the catalog's collector to the session's own report: the session collects it
    after the paths given, and its items' collect report is what the terminal counts."""
    report = yield
    if isinstance(collector, pytest.Session) and report.passed:
        report.result.append(rule_collector(collector))
    return report


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    """Run the catalog before the items, so its time is no item's and a run the server
    refused as a whole ends the session here.

    That end is a :class:`pytest.UsageError`, as for the first contact: whether the first
    request or the catalog found that every completion is refused, it is the same condition,
    and pytest users read exit status 4 with one ``ERROR:`` line as "this run could not be
    set up", where 74 failed items (exit status 1) would each claim a verdict the server
    never let the harness reach. (``pytest.exit`` would print ``!!! Exit: ...`` and exit 2,
    pytest's "interrupted", which reads like a user's Ctrl-C.)"""
    config = session.config
    if config.option.collectonly or (session.testsfailed
                                     and not config.option.continue_on_collection_errors):
        return
    if any(isinstance(item, RuleItem) for item in session.items):
        catalog_result(config)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A rule item's call takes its rule's share of the catalog run (the run happened before
    the items, so the measured call is only the look-up of a verdict)."""
    report = yield
    if isinstance(item, RuleItem) and call.when == "call" and item.seconds is not None:
        report.duration = item.seconds
    return report


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter,
                            config: pytest.Config) -> None:
    """The baseline's verdict on the run, as ``conformance run --baseline`` prints it."""
    if RESULT_KEY not in config.stash:
        return
    judged = baseline_outcome(config)
    if judged is None:
        return
    terminalreporter.section("conformance baseline")
    for line in outcome_lines(*judged):
        terminalreporter.write_line(line)
