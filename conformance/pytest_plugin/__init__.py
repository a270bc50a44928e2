"""pytest plugin of the conformance harness (entry point ``pytest11: conformance``).

Registered for every pytest run in an environment where completions-conformance is installed,
so it must stay cheap to import and do nothing unless asked: without ``--conformance-url`` it
adds no items and its fixtures skip. With it, the rule catalog runs as pytest items (the rule
ID is the item name, ``conformance_must`` / ``conformance_should`` / ``conformance_may`` mark
the level, :attr:`conformance.model.Level.marker`), and fixtures let users write their own
conformance tests::

    def test_my_rule(conformance_client):
        exchange = conformance_client.complete({"prompt": "Hi", "max_tokens": 4})
        assert exchange.status == 200

The heavy machinery lives in :mod:`conformance.pytest_plugin.support` and the active plugin's
hooks in :mod:`conformance.pytest_plugin.session`, imported only when a target is named (inside
the hooks and fixtures below, never at the top: only to keep every other pytest run light). A
run that cannot happen (a wrong option, an unreachable target, a refused key, a catalog the
server refused as a whole) stops with one ``ERROR:`` line and exit status 4, like any pytest
usage error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from conformance.target.options import add_pytest_target_options

if TYPE_CHECKING:
    from conformance.pytest_plugin.support import ConformanceClient


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance", "completions conformance harness (the target options "
                            "are those of `conformance run`, as --conformance-NAME; without "
                            "--conformance-url / --conformance-base-url the plugin does nothing)")
    add = group.addoption
    add_pytest_target_options(add)
    add("--conformance-select", action="append", default=[], metavar="IDS",
        help="only these rule IDs or globs, comma-separated")
    add("--conformance-deselect", action="append", default=[], metavar="IDS",
        help="leave out these rule IDs or globs, comma-separated")
    add("--conformance-strict", action="store_true", default=False,
        help="NON_STRICT (a broken SHOULD) fails the item")
    add("--conformance-baseline", metavar="FILE", default=None,
        help="accepted deviations (a previous JSON report, or the YAML `conformance baseline` "
        "writes): their FAILs are xfail, a fixed one is XPASS(strict), a new FAIL fails")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "conformance: a rule of the completions conformance catalog")
    if _active(config):
        # imported here, not at the top, only to keep pytest light: the model and the session's
        # hooks import the spec, jsonschema and aiohttp, which a run naming no target never needs
        from conformance.model import Level
        from conformance.pytest_plugin import session as pytest_session

        for level in Level:
            config.addinivalue_line("markers",
                                    f"{level.marker}: a conformance rule of level {level}")
        config.pluginmanager.register(pytest_session, "conformance-session")


def _active(config: pytest.Config) -> bool:
    return bool(config.getoption("conformance_base_url", default=None))


def _require(config: pytest.Config) -> None:
    if not _active(config):
        pytest.skip("conformance fixtures need --conformance-url")


@pytest.fixture(scope="session")
def conformance_settings(pytestconfig: pytest.Config) -> Any:
    """The run's :class:`~conformance.run.settings.Settings` (target, profile, model, caps)."""
    _require(pytestconfig)
    from conformance.pytest_plugin.support import settings_for

    return settings_for(pytestconfig)


@pytest.fixture(scope="session")
def conformance_profile(conformance_settings: Any) -> Any:
    """The contract profile (``spec.Profile``) the server is checked against."""
    return conformance_settings.profile


@pytest.fixture(scope="session")
def conformance_client(conformance_settings: Any) -> ConformanceClient:
    """A synchronous client that records exchanges the way the catalog does."""
    from conformance.pytest_plugin.support import ConformanceClient

    return ConformanceClient(conformance_settings)


@pytest.fixture(scope="session")
def conformance_result(pytestconfig: pytest.Config) -> Any:
    """The :class:`~conformance.model.RunResult` of the selected catalog (run once)."""
    _require(pytestconfig)
    from conformance.pytest_plugin.support import catalog_result_in_test

    return catalog_result_in_test(pytestconfig)
