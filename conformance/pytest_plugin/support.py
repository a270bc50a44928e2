"""What the pytest plugin needs once it is active: settings from options, the catalog run
(once per session, before the first item), rule items and the client fixture's class.

Whatever stops the run as a whole (a wrong option, a target that cannot be reached or refuses
the key, a catalog run the server refused) is a :class:`pytest.UsageError` carrying the one
line ``conformance run`` prints, with the options spelled ``--conformance-NAME``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from conformance.compare.baseline import (
    Baseline,
    BaselineOutcome,
    judge_against,
    load_baseline,
    result_cases,
)
from conformance.compare.reports import ReportError
from conformance.errors import HarnessError, UsageError
from conformance.model import Rule, RuleResult, RunResult, Verdict
from conformance.model.timing import rule_seconds
from conformance.reporting.text import finding_lines
from conformance.rules import CATALOG
from conformance.run.runner import execute
from conformance.run.settings import Settings
from conformance.target.checks import split_list
from conformance.target.diagnosis import refused_run
from conformance.target.opening import open_target
from conformance.target.options import target_from_pytest
from conformance.target.resolved import ResolvedTarget, resolve_target
from conformance.transport import Exchange, open_session
from conformance.views import StreamView
from spec import JSON

TARGET_KEY = pytest.StashKey[ResolvedTarget]()
SETTINGS_KEY = pytest.StashKey[Settings]()
BASELINE_KEY = pytest.StashKey[Baseline]()
OUTCOME_KEY = pytest.StashKey[BaselineOutcome]()
RESULT_KEY = pytest.StashKey[RunResult]()
SECONDS_KEY = pytest.StashKey[dict[str, float]]()


def _option(config: pytest.Config, name: str) -> Any:
    return config.getoption(f"conformance_{name}")


def check_options(config: pytest.Config) -> None:
    """The checks that need no network: every target option, and a selection that leaves at
    least one rule (an empty one is a typo, not a run that passed)."""
    target_of(config)
    if not selected_rules(config):
        raise pytest.UsageError("no rule matches --conformance-select / --conformance-deselect "
                                "for this profile")
    baseline_of(config)


def baseline_of(config: pytest.Config) -> Baseline | None:
    """The ``--conformance-baseline`` file, read once (on an xdist worker too, which skips
    the controller's :func:`check_options`); None without one."""
    path = _option(config, "baseline")
    if not path:
        return None
    if BASELINE_KEY not in config.stash:
        try:
            config.stash[BASELINE_KEY] = load_baseline(path)
        except ReportError as exc:
            raise pytest.UsageError(f"--conformance-baseline: {exc}") from None
    return config.stash[BASELINE_KEY]


def baseline_outcome(config: pytest.Config) -> tuple[Baseline, BaselineOutcome] | None:
    """The run judged against ``--conformance-baseline`` (None without one), once."""
    baseline = baseline_of(config)
    if baseline is None:
        return None
    if OUTCOME_KEY not in config.stash:
        config.stash[OUTCOME_KEY] = judge_against(catalog_result(config), baseline)
    return baseline, config.stash[OUTCOME_KEY]


def target_of(config: pytest.Config) -> ResolvedTarget:
    """The target of the ``--conformance-*`` options, resolved once (on an xdist worker too,
    which skips the controller's :func:`check_options`) as ``conformance run`` resolves it."""
    if TARGET_KEY not in config.stash:
        try:
            config.stash[TARGET_KEY] = resolve_target(target_from_pytest(config))
        except UsageError as exc:
            raise pytest.UsageError(str(exc)) from None
    return config.stash[TARGET_KEY]


def settings_for(config: pytest.Config) -> Settings:
    """The run's settings: the target opened as ``conformance run`` opens it, reached once
    (the model discovered if not given), so an unreachable or refusing target is one line
    here, not a verdict per rule."""
    if SETTINGS_KEY not in config.stash:
        try:
            with open_target(target_of(config)) as opened:
                config.stash[SETTINGS_KEY] = opened.settings
        except (UsageError, HarnessError) as exc:
            raise pytest.UsageError(str(exc)) from None
    return config.stash[SETTINGS_KEY]


def selected_rules(config: pytest.Config) -> list[Rule]:
    return CATALOG.select(
        profile=target_of(config).profile,
        select=split_list(_option(config, "select")),
        deselect=split_list(_option(config, "deselect")),
    )


def catalog_result(config: pytest.Config) -> RunResult:
    """The catalog's result, run on first use; a run the server refused as a whole (every
    completion unanswered, 401 / 404, or mostly rate-limited) raises :class:`pytest.UsageError`
    with :func:`~conformance.target.diagnosis.refused_run`'s line instead of judging anything."""
    if RESULT_KEY not in config.stash:
        settings = settings_for(config)
        rules = selected_rules(config)
        strict = bool(_option(config, "strict"))
        result = asyncio.run(execute(settings, rules, strict=strict))
        refused = refused_run(result, settings, target_of(config).options)
        if refused is not None:
            raise pytest.UsageError(refused)
        config.stash[RESULT_KEY] = result
        config.stash[SECONDS_KEY] = rule_seconds(result)
    return config.stash[RESULT_KEY]


def catalog_result_in_test(config: pytest.Config) -> RunResult:
    """:func:`catalog_result` from inside an item or a fixture, where pytest would turn a
    :class:`pytest.UsageError` into one failed test: a refused run ends the session instead
    (exit status 4, as when it is found before the items run)."""
    try:
        return catalog_result(config)
    except pytest.UsageError as exc:
        pytest.exit(str(exc), returncode=pytest.ExitCode.USAGE_ERROR)


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
        self.add_marker(rule.level.marker)

    def runtest(self) -> None:
        run = catalog_result_in_test(self.config)
        result = next(r for r in run.results if r.rule.id == self.rule.id)
        self._expect_from_baseline(result, strict=run.strict)
        verdict = result.verdict
        if verdict is Verdict.SKIP:
            pytest.skip(result.message or "not applicable")
        if verdict is Verdict.ERROR:
            raise RuleError(_describe(result))
        if verdict is Verdict.FAIL or (verdict is Verdict.NON_STRICT and run.strict):
            raise RuleViolation(_describe(result))
        if verdict is Verdict.NON_STRICT:
            pytest.xfail(f"NON_STRICT: {result.message}")

    def _expect_from_baseline(self, result: RuleResult, *, strict: bool) -> None:
        """Mark the item strict-xfail when the baseline accepts its failure (the baseline's
        reason is the xfail's), or when the baseline lists a deviation of the rule that no
        longer fails: a PASS is then pytest's XPASS(strict), a failure saying the baseline can
        shrink. A failure the baseline does not accept stays a plain failure."""
        judged = baseline_outcome(self.config)
        if judged is None:
            return
        baseline, outcome = judged
        rule = self.rule.id
        if result.verdict.fails(strict=strict):
            if rule in outcome.accepted:
                why = baseline.why(rule, result_cases(result)) or "no reason given"
                self.add_marker(pytest.mark.xfail(
                    strict=True, reason=f"accepted by the baseline {baseline.path}: {why}"))
            return
        stale = outcome.stale_of(rule)
        if stale and result.verdict is Verdict.PASS:
            self.add_marker(pytest.mark.xfail(strict=True, reason=(
                f"accepted by the baseline {baseline.path}, but it passes now: remove "
                f"{', '.join(stale)} from the baseline")))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, (RuleViolation, RuleError)):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    @property
    def seconds(self) -> float | None:
        """The rule's share of the catalog run's time (:func:`rule_seconds`), once it ran."""
        shares = self.config.stash.get(SECONDS_KEY, None)
        return shares.get(self.rule.id) if shares is not None else None

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"{self.rule.id}: {self.rule.title}"


def _describe(result: RuleResult) -> str:
    lines = [f"{result.verdict}: {result.rule.id} {result.rule.title}"]
    lines += [f"  {label}: {text}" for label, text in finding_lines(result) if label != "Rule"]
    return "\n".join(lines)


class RuleCollector(pytest.Collector):
    """The catalog as a collector under the session: its items are collected like any test's,
    so pytest counts them (``collected N items``) and ``-k`` / ``-m`` deselect them."""

    def collect(self) -> list[pytest.Item]:
        return [RuleItem.from_parent(self, name=rule.id, rule=rule)
                for rule in selected_rules(self.config)]


def rule_collector(session: pytest.Session) -> RuleCollector:
    """The session's ``conformance`` collector (its items are ``conformance::RULE-ID``)."""
    return RuleCollector.from_parent(session, name="conformance", nodeid="conformance")


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
