"""Accepted deviations: a server's known FAILs, so CI fails only on a new one.

A baseline is a previous report of the server (every FAIL in it accepted), or a small YAML
file that ``conformance baseline REPORT.json`` writes and people edit::

    accepted:
      LOGPROBS-004: vLLM puts </s> in logprobs.tokens (upstream issue 1234)
      ERRORS-001/invalid/best-of-below-n: best_of < n is accepted with 200

An entry ``RULE`` accepts every failing case of the rule; ``RULE/CASE`` accepts one case
(:func:`~conformance.compare.reports.finding_case`: the exchange, then the JSON path if any),
so a rule that fails with a case more than its entries list is a new deviation. A run given
``--baseline`` reports everything as it would without it, exits 0 when every failure is
accepted and 1 on one that is not, and names the accepted deviations that now pass, so the file
can shrink (web-platform-tests' expectation files and pytest's strict xfail work alike).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from conformance.model import RuleResult, RunResult

from .diff import FAILING
from .reports import ReportError, SavedReport, finding_case, load_report


@dataclass(frozen=True)
class Baseline:
    """Accepted deviations: whole rules, and single cases by rule."""

    path: str
    rules: dict[str, str]
    """Rule ID -> why its failures are accepted."""
    cases: dict[str, dict[str, str]]
    """Rule ID -> case -> why that case is accepted."""

    def accepts(self, rule: str, cases: list[str]) -> bool:
        """Whether a failure of ``rule`` with these cases is accepted (a failure without a
        case, an ERROR say, only by an entry for the whole rule)."""
        if rule in self.rules:
            return True
        listed = self.cases.get(rule, {})
        return bool(cases) and all(case in listed for case in cases)

    def why(self, rule: str, cases: list[str]) -> str:
        """The baseline's reasons for accepting ``rule`` with these cases, joined."""
        if rule in self.rules:
            return self.rules[rule]
        listed = self.cases.get(rule, {})
        return "; ".join(dict.fromkeys(listed[case] for case in cases if case in listed))

    def entries(self) -> list[str]:
        return [*self.rules, *(f"{rule}/{case}" for rule, cases in self.cases.items()
                               for case in cases)]


def _failures(report: SavedReport) -> dict[str, str]:
    """Each failing case of ``report`` as an entry (``RULE/CASE``, or ``RULE`` for a failure
    with no case), its message as the reason."""
    entries: dict[str, str] = {}
    for entry in report.rules.values():
        if entry.verdict in FAILING:
            if entry.findings:
                entries.update({f"{entry.rule}/{case}": finding.message
                                for case, finding in entry.findings.items()})
            else:
                entries[entry.rule] = entry.message
    return entries


def _from_entries(path: str, entries: dict[str, str]) -> Baseline:
    rules: dict[str, str] = {}
    cases: dict[str, dict[str, str]] = {}
    for key, why in entries.items():
        rule, _, case = str(key).partition("/")
        if case:
            cases.setdefault(rule, {})[case] = str(why)
        else:
            rules[rule] = str(why)
    return Baseline(path, rules, cases)


def load_baseline(path: str | Path) -> Baseline:
    """A baseline from a report (JSON) or an entries file (YAML); :class:`ReportError` with
    one line when it is neither."""
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ReportError(f"cannot read the baseline {name}: {exc.strerror or exc}") from None
    if text.lstrip().startswith("{"):
        return _from_entries(name, _failures(load_report(path)))
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ReportError(f"the baseline {name} is neither a JSON report nor YAML: "
                          f"{str(exc).splitlines()[0]}") from None
    accepted = data.get("accepted") if isinstance(data, dict) else None
    if accepted is None:
        accepted = {}
    if not isinstance(accepted, dict):
        raise ReportError(f"the baseline {name} has no 'accepted:' mapping of RULE or "
                          f"RULE/CASE to a reason (write one with `conformance baseline "
                          f"REPORT.json`)")
    return _from_entries(name, {str(key): str(why or "") for key, why in accepted.items()})


def baseline_option(path: str | None) -> Baseline | None:
    """The ``--baseline`` flag's file, read before anything is sent: a bad one is a
    :class:`~conformance.errors.UsageError` (exit 2 at once)."""
    if path is None:
        return None
    from conformance.errors import UsageError

    try:
        return load_baseline(path)
    except ReportError as exc:
        raise UsageError(str(exc)) from None


@dataclass(frozen=True)
class BaselineOutcome:
    """A run judged against a baseline."""

    accepted: tuple[str, ...]
    """Failing rules whose every case the baseline accepts."""
    new: tuple[str, ...]
    """Failing rules with a case the baseline does not accept: what makes the run fail."""
    now_passing: tuple[str, ...]
    """Baseline entries whose rule PASSes now, or whose case no longer fails: remove them."""

    @property
    def exit_code(self) -> int:
        return 1 if self.new else 0

    def stale_of(self, rule: str) -> list[str]:
        """The entries of ``rule`` that no longer fail (remove them)."""
        return [entry for entry in self.now_passing
                if entry == rule or entry.startswith(rule + "/")]


def result_cases(result: RuleResult) -> list[str]:
    """The cases a rule's result fails with, as a baseline names them."""
    return [finding_case({"exchange": f.exchange, "path": f.path}) for f in result.findings]


def judge_against(result: RunResult, baseline: Baseline) -> BaselineOutcome:
    """Which of ``result``'s failures ``baseline`` accepts, and which of its entries are stale."""
    accepted: list[str] = []
    new: list[str] = []
    failing_cases: dict[str, set[str]] = {}
    passing: set[str] = set()
    for item in result.results:
        rule = item.rule.id
        if item.verdict.value == "PASS":
            passing.add(rule)
        if not item.verdict.fails(strict=result.strict):
            continue
        cases = result_cases(item)
        failing_cases[rule] = set(cases)
        (accepted if baseline.accepts(rule, cases) else new).append(rule)
    stale = [rule for rule in baseline.rules if rule in passing]
    stale += [f"{rule}/{case}" for rule, cases in baseline.cases.items() for case in cases
              if rule in passing or (rule in failing_cases and case not in failing_cases[rule])]
    return BaselineOutcome(tuple(accepted), tuple(new), tuple(stale))


def baseline_yaml(report_path: str | Path) -> str:
    """The entries file for the failures of the report at ``report_path``: one ``RULE/CASE``
    entry per failing case (the rule alone for a failure with none), its message as reason."""
    report = load_report(report_path)
    entries = {key: why.split("\n", 1)[0] for key, why in _failures(report).items()}
    head = (f"# Accepted deviations of {report.label}, from {report.path}.\n"
            "# `conformance run --baseline THIS_FILE` exits 0 while every failure is listed "
            "here.\n# RULE accepts every case of a rule; RULE/CASE one case. Say why beside "
            "each.\n")
    return head + yaml.safe_dump({"accepted": entries}, sort_keys=False, allow_unicode=True,
                                 width=1_000)


def exit_code_with(result: RunResult, outcome: BaselineOutcome) -> int:
    """``result``'s exit status once its accepted failures no longer count: 1 for a failure
    the baseline does not accept (or ``--fail-on-skip``'s hole), 2 stays 2, else 0."""
    code = result.exit_code
    if code != 1 or outcome.new:
        return code
    if result.fail_on_skip and result.coverage.unjudged_must:
        return 1
    return 0


def outcome_lines(baseline: Baseline, outcome: BaselineOutcome) -> list[str]:
    """What the console says of a run judged against ``baseline``."""
    lines = [f"baseline {baseline.path}: {len(outcome.accepted)} failing rule(s) accepted"
             + (f" ({', '.join(outcome.accepted)})" if outcome.accepted else "")]
    if outcome.new:
        lines.append(f"not in the baseline: {', '.join(outcome.new)}: these fail the run")
    if outcome.now_passing:
        lines.append(f"accepted but no longer failing (remove them from the baseline): "
                     f"{', '.join(outcome.now_passing)}")
    lines.append("FAILED against the baseline" if outcome.new
                 else "no failure beyond the baseline")
    return lines
