"""What the pytest plugin needs once it is active: settings from options, the catalog run
(once per session, on the first item), rule items and the client fixture's class."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from conformance.configure import (
    HarnessError,
    UsageError,
    pick_profile,
    settings_from_target,
    split_list,
)
from conformance.model import Rule, RuleResult, RunResult, Verdict
from conformance.pytest_plugin import LEVEL_MARKERS
from conformance.reporting.text import finding_lines
from conformance.rules import CATALOG
from conformance.runner import execute
from conformance.settings import Settings
from conformance.target_options import target_from_pytest
from conformance.transport import Exchange, open_session
from conformance.views import StreamView
from spec import JSON

SETTINGS_KEY = pytest.StashKey[Settings]()
RESULT_KEY = pytest.StashKey[RunResult]()


def _option(config: pytest.Config, name: str) -> Any:
    return config.getoption(f"conformance_{name}")


def settings_for(config: pytest.Config) -> Settings:
    """Settings from the ``--conformance-*`` options, by the recipe ``conformance run`` uses
    (model discovered once if not given)."""
    if SETTINGS_KEY in config.stash:
        return config.stash[SETTINGS_KEY]
    try:
        settings = asyncio.run(settings_from_target(target_from_pytest(config)))
    except (UsageError, HarnessError) as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[SETTINGS_KEY] = settings
    return settings


def selected_rules(config: pytest.Config) -> list[Rule]:
    profile = pick_profile(_option(config, "profile"), _option(config, "base_url"))
    return CATALOG.select(
        profile=profile.name,
        select=split_list(_option(config, "select")),
        deselect=split_list(_option(config, "deselect")),
    )


def catalog_result(config: pytest.Config) -> RunResult:
    if RESULT_KEY not in config.stash:
        settings = settings_for(config)
        rules = selected_rules(config)
        strict = bool(_option(config, "strict"))
        config.stash[RESULT_KEY] = asyncio.run(execute(settings, rules, strict=strict))
    return config.stash[RESULT_KEY]


class RuleViolation(Exception):
    """A FAIL (or a NON_STRICT under --conformance-strict) of one rule."""


class RuleError(Exception):
    """An ERROR verdict: the harness or the connection broke."""


class RuleItem(pytest.Item):
    """One catalog rule as a pytest item; its verdict comes from the session's catalog run."""

    def __init__(self, *, rule: Rule, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rule = rule
        self.add_marker("conformance")
        self.add_marker(LEVEL_MARKERS[str(rule.level)])

    def runtest(self) -> None:
        run = catalog_result(self.config)
        result = next(r for r in run.results if r.rule.id == self.rule.id)
        verdict = result.verdict
        if verdict is Verdict.SKIP:
            pytest.skip(result.message or "not applicable")
        if verdict is Verdict.ERROR:
            raise RuleError(_describe(result))
        if verdict is Verdict.FAIL or (verdict is Verdict.NON_STRICT and run.strict):
            raise RuleViolation(_describe(result))
        if verdict is Verdict.NON_STRICT:
            pytest.xfail(f"NON_STRICT: {result.message}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, (RuleViolation, RuleError)):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"{self.rule.id}: {self.rule.title}"


def _describe(result: RuleResult) -> str:
    lines = [f"{result.verdict}: {result.rule.id} {result.rule.title}"]
    lines += [f"  {label}: {text}" for label, text in finding_lines(result) if label != "Rule"]
    return "\n".join(lines)


class RuleCollector(pytest.Collector):
    def collect(self) -> list[pytest.Item]:
        return [RuleItem.from_parent(self, name=rule.id, rule=rule)
                for rule in selected_rules(self.config)]


def rule_items(session: pytest.Session) -> list[pytest.Item]:
    collector = RuleCollector.from_parent(session, name="conformance", nodeid="conformance")
    return collector.collect()


class ConformanceClient:
    """Send recorded requests to the server under test from your own tests (synchronously).

    ``complete`` posts a completion (model filled in) and returns the recorded
    :class:`~conformance.transport.Exchange`; ``stream`` does the same with ``stream: true``
    and returns the :class:`~conformance.views.StreamView` of the events.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def _send(self, method: str, url: str, body: JSON = None) -> Exchange:
        from conformance.client import Client

        async def one() -> Exchange:
            async with open_session() as session:
                client = Client(self.settings, session)
                stream = isinstance(body, dict) and body.get("stream") is True
                return await client.send(method, url, json_body=body, stream=stream)

        return asyncio.run(one())

    def complete(self, body: dict[str, JSON]) -> Exchange:
        return self._send("POST", self.settings.url("completions"),
                          {"model": self.settings.model, **body})

    def stream(self, body: dict[str, JSON]) -> StreamView:
        return StreamView(self.complete({**body, "stream": True}))

    def models(self) -> Exchange:
        return self._send("GET", self.settings.models_url)
