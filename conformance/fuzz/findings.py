"""Findings of a fuzz run, gathered from schemathesis' recorded scenarios, one per defect.

A failing check is recorded on the case that failed it. Findings are keyed as schemathesis keys
its failures (check, operation and the failure's own key: the rule ID for the catalog's rules);
of two examples of one finding the smaller request is kept, and :mod:`conformance.fuzz.shrink`
then replaces it with the smallest one hypothesis can find. Every finding carries a curl command
built by :func:`conformance.transport.to_curl`, so it pastes as is, with the API key and
``--header`` values read from shell variables (``$OPENAI_API_KEY``, ``$X_MY_HEADER``...).
:mod:`conformance.fuzz.results` turns them into the result model every reporter reads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

import schemathesis
from schemathesis.core.failures import Failure
from schemathesis.engine.recorder import Interaction, ScenarioRecorder

from conformance.model import Violation
from conformance.transport import DIRECT, Network, RecordedRequest, to_curl
from spec import JSON

from .checks import RuleFailure
from .exchange import recorded_request, request_of
from .guard import NetworkFailure
from .shrink import failure_key

EXCERPT_BYTES = 600
CONNECTION = "connection"
"""The check name of findings whose request got no complete response."""


@dataclass(frozen=True)
class FuzzFinding:
    """One defect: which check found it, the failure's text, and its smallest reproduction."""

    check: str
    key: str
    rule_id: str | None
    title: str
    message: str
    operation: str
    severity: str
    status: int | None
    request: RecordedRequest
    curl: str
    response_excerpt: str = ""
    mode: str | None = None
    shrunk: bool = False
    case: schemathesis.Case | None = field(default=None, compare=False, repr=False)
    """The schemathesis case that showed it (what :mod:`conformance.fuzz.shrink` reduces)."""
    violation: Violation | None = field(default=None, compare=False, repr=False)
    """What a catalog rule reported (expected, actual, path, evidence); None for the others."""

    @property
    def size(self) -> int:
        return len(self.request.body) + len(self.request.url)

    def as_json(self) -> dict[str, JSON]:
        return {
            "check": self.check,
            "rule": self.rule_id,
            "title": self.title,
            "message": self.message,
            "operation": self.operation,
            "severity": self.severity,
            "mode": self.mode,
            "shrunk": self.shrunk,
            "status": self.status,
            "request": {
                "method": self.request.method,
                "url": self.request.url,
                "body": self.request.body.decode("utf-8", "replace"),
            },
            "response_excerpt": self.response_excerpt,
            "curl": self.curl,
        }


def finding_of(check: str, failure: Failure, request: RecordedRequest,
               response: schemathesis.Response | None, *, mode: str | None,
               secret_headers: tuple[str, ...], shrunk: bool = False,
               case: schemathesis.Case | None = None) -> FuzzFinding:
    excerpt = response.content[:EXCERPT_BYTES].decode("utf-8", "replace") if response else ""
    return FuzzFinding(
        check=check,
        key=failure_key(check, failure),
        rule_id=failure.rule_id if isinstance(failure, RuleFailure) else None,
        title=failure.title,
        message=failure.message,
        operation=failure.operation or "",
        severity=failure.severity.value,
        status=response.status_code if response is not None else None,
        request=request,
        curl=to_curl(request, secret_headers=secret_headers),
        response_excerpt=excerpt,
        mode=mode,
        shrunk=shrunk,
        case=case,
        violation=failure.violation if isinstance(failure, RuleFailure) else None,
    )


def shrunk_finding(finding: FuzzFinding, case: schemathesis.Case,
                   response: schemathesis.Response, failure: Failure,
                   secret_headers: tuple[str, ...]) -> FuzzFinding:
    """``finding`` reproduced by a smaller case (kept only if it is smaller)."""
    request = request_of(response, secret_headers=secret_headers)
    smaller = finding_of(finding.check, failure, request, response, mode=finding.mode,
                         secret_headers=secret_headers, shrunk=True, case=case)
    return smaller if smaller.size <= finding.size else replace(finding, shrunk=True)


RuleOf = Callable[[NetworkFailure], str | None]
"""The rule a request that got no complete response fails
(:func:`conformance.fuzz.unanswered.unanswered_rule` for a run's profile); None when no rule
covers the request (schemathesis' probe of a method the operation does not have)."""


def default_rule(failure: NetworkFailure) -> str:
    """Without the profile at hand: SSE-008 for a stream, ERRORS-008 for anything else."""
    return "SSE-008" if failure.streamed else "ERRORS-008"


def network_finding(failure: NetworkFailure, secret_headers: tuple[str, ...], *,
                    shrunk: bool = False, rule_of: RuleOf = default_rule) -> FuzzFinding:
    """The finding of a request that got no complete response, under the rule ``rule_of``
    says, as in ``conformance run``: a valid stream cut short is SSE-008's failure, any other
    valid request's ERRORS-008's, an invalid request's the invalid-input rule of its kind. One
    finding per rule and exception class (``connection:ERRORS-001:ReadTimeout``)."""
    what = "stream" if failure.streamed else "response"
    rule_id = rule_of(failure) or default_rule(failure)
    return FuzzFinding(
        check=CONNECTION,
        key=connection_key(rule_id, failure.kind),
        rule_id=rule_id,
        title=f"The {what} did not arrive whole",
        message=f"The request got no complete response: {failure.error}",
        operation=failure.operation,
        severity="critical",
        status=None,
        request=failure.request,
        curl=to_curl(failure.request, secret_headers=secret_headers),
        shrunk=shrunk,
        case=failure.case,
    )


def connection_key(rule_id: str, kind: str) -> str:
    """The key of a connection finding: its rule and the exception's class name."""
    return f"{CONNECTION}:{rule_id}:{kind}"


def connection_kind(key: str) -> str:
    """The exception's class name in a :func:`connection_key` (class names hold no colon)."""
    return key.rsplit(":", 1)[-1]


class FindingCollector:
    """Folds recorded scenarios and network failures into deduplicated findings."""

    def __init__(self, secret_headers: Iterable[str] = (), *, network: Network = DIRECT,
                 rule_of: RuleOf = default_rule) -> None:
        self.secret_headers = tuple(secret_headers)
        self.network = network.redacted()
        self.rule_of = rule_of
        self._found: dict[tuple[str, str], FuzzFinding] = {}

    def _through_network(self, finding: FuzzFinding) -> FuzzFinding:
        """``finding`` with its reproduction going the way the run went (proxy, CA bundle,
        client certificate, ``--insecure``): schemathesis' recordings do not say."""
        if self.network == DIRECT or finding.request.network is not None:
            return finding
        request = replace(finding.request, network=self.network)
        return replace(finding, request=request,
                       curl=to_curl(request, secret_headers=self.secret_headers))

    def add_scenario(self, recorder: ScenarioRecorder) -> None:
        for case_id, nodes in recorder.checks.items():
            for node in nodes:
                info = node.failure_info
                if info is None:
                    continue
                failure = info.failure
                interaction = recorder.interactions.get(failure.case_id or case_id)
                node_case = recorder.cases.get(failure.case_id or case_id)
                if interaction is None:
                    continue
                case = node_case.value if node_case is not None else None
                mode = None
                if case is not None and case.meta is not None:
                    mode = case.meta.generation.mode.value
                request = _recorded(interaction, self.secret_headers)
                self.keep(finding_of(node.name, failure, request, interaction.response,
                                     mode=mode, secret_headers=self.secret_headers, case=case))

    def add_network(self, failures: Iterable[NetworkFailure]) -> None:
        for failure in failures:
            if failure.connected and self.rule_of(failure) is not None:
                self.keep(network_finding(failure, self.secret_headers, rule_of=self.rule_of))

    def keep(self, finding: FuzzFinding) -> None:
        finding = self._through_network(finding)
        slot = (finding.operation, finding.key)
        kept = self._found.get(slot)
        if kept is None or finding.size < kept.size:
            self._found[slot] = finding

    def replace(self, finding: FuzzFinding) -> None:
        finding = self._through_network(finding)
        self._found[(finding.operation, finding.key)] = finding

    def findings(self) -> list[FuzzFinding]:
        return sorted(self._found.values(), key=lambda f: (f.operation, f.rule_id or "~", f.check))


def _recorded(interaction: Interaction, secret_headers: tuple[str, ...]) -> RecordedRequest:
    request = interaction.request
    headers = [(name, values[0]) for name, values in request.headers.items() if values]
    return recorded_request(request.method, request.uri, headers, request.body,
                            secret_headers=secret_headers)
