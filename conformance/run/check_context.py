"""What a check reads: the recorded probes, the profile and the claimed features.

The accessors enforce the layering that keeps rules orthogonal. A rule that needs a complete,
well-framed stream asks :meth:`CheckContext.stream`; when the stream is not (a wrong status, a
dropped connection, bytes that are not UTF-8, JSON that does not parse), it gets
:class:`~conformance.model.NotApplicable` naming the defect, which a lower rule judges. So each
defect FAILs the rule that owns it and SKIPs the ones built on top of it.

A request refused as a whole (401 / 403, 404 on the completions path, 429 / 503 after
retries, no answer: :mod:`conformance.run.refusal`) says nothing about the behaviour a rule
requires: the accessors raise NotApplicable naming the refusal, and a rule that judged no
exchange at all SKIPs (:attr:`CheckContext.judged` stays empty), never PASSes.

A valid request the server failed (a 5xx, or a 4xx about neither its form nor the caller:
:func:`conformance.run.refusal.failed_valid`) is refused the same way, but named as ERRORS-008's:
that rule fails it, a case each, and every rule that needed the answer SKIPs pointing there,
MUST and SHOULD alike (one cause, one finding: a gateway whose upstream is down is one FAIL,
not forty).

One defect is not layered away: a valid request the rule needs that the server rejects for its
form (400, 422: :data:`conformance.run.refusal.FORM_STATUSES`). The server says it does not take
what the rule requires, and the profile says it should, so the rule FAILs naming the exchange
(as ERRORS-008 does): a server without prompt lists fails the rules of prompt lists, and the
finding says which ``--no-feature`` would state that instead. A skipped rule would hide that
the claim is false.

An exchange the harness stopped reading at one of its limits was not seen to its end. When the
server reached the limit (too many events or bytes, too slow:
:data:`~conformance.views.endings.SERVER_LIMITS`), that is the server's deviation, and one rule
owns it: SSE-009 for a stream. The run's memory budget is the harness's own
(``--max-run-memory``). Either way a rule whose requirement needs the end (``[DONE]``, the
finish chunk, the usage chunk, the whole body) cannot judge the exchange: it passes it over
(:meth:`CheckContext.pass_over`) and, having judged nothing else, SKIPs with the reason. A rule
about each byte or event (UTF-8, each payload JSON, each chunk's schema, the headers) judges
what was seen.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

import spec
from conformance.model import HarnessProblem, NotApplicable, Rule, Violation
from conformance.probes.model import ProbeOutcome
from conformance.run.refusal import Refusal, refusal_of, summary
from conformance.run.settings import Settings
from conformance.transport import Exchange, Termination
from conformance.views import StreamView
from conformance.views.endings import cut_off, unfinished, unsound
from conformance.wire_json import parse_json
from spec import JSON

JUDGED_REFUSALS = frozenset({Refusal.NO_ANSWER, Refusal.FAILED})
"""What a check that judges a refusal itself (``judge_refusal``: a server that stops answering
after invalid input) gets back instead of NotApplicable."""

Check = Callable[["CheckContext"], None]
"""A rule's check: it reads the context and returns, or raises what :mod:`conformance.model.rule`
lists (a :class:`~conformance.model.Violation`, :class:`~conformance.model.NotApplicable`)."""

class CheckContext:
    """The read-only world of one rule's check."""

    def __init__(
        self,
        rule: Rule,
        settings: Settings,
        outcomes: Mapping[str, ProbeOutcome],
        views: dict[int, StreamView] | None = None,
        *,
        judge_refusals: bool = True,
    ) -> None:
        """``judge_refusals`` False leaves a refused request unjudged: the fuzzer's requests
        are judged for acceptance by schemathesis's own check (its mutations may make a
        request the contract calls valid unfit to answer, a wrong media type say)."""
        self.rule = rule
        self.judge_refusals = judge_refusals
        self.settings = settings
        self._outcomes = outcomes
        self._views = views if views is not None else {}
        self.judged: set[str] = set()
        """The exchanges (``probe/key``) the check read an answer of: none, and the rule
        SKIPs rather than PASSes."""
        self.refused: dict[str, tuple[Exchange, Refusal]] = {}
        """The exchanges the check asked for that the server refused as a whole."""
        self.passed_over: dict[str, str] = {}
        """The exchanges the check read but could not judge (a stream cut by a limit before
        its end), with why: what a rule that judged nothing SKIPs for."""

    def judge(self, label: str) -> None:
        """Note that the check judged the answer of ``label`` (the scanning readers call it;
        the accessors below do it themselves)."""
        self.judged.add(label)

    def pass_over(self, label: str, reason: str) -> None:
        """Note that the check could not judge the answer of ``label``, and why."""
        self.passed_over.setdefault(label, reason)

    def unjudged(self) -> str | None:
        """Why the check judged nothing, from what it passed over (each reason once, with its
        first exchange and how many share it); None when it passed nothing over."""
        if not self.passed_over:
            return None
        labels: dict[str, list[str]] = {}
        for label, reason in self.passed_over.items():
            labels.setdefault(reason, []).append(label)
        return "; ".join(
            f"{found[0]}{f' and {len(found) - 1} more' if len(found) > 1 else ''}: {reason}"
            for reason, found in labels.items()
        )

    # -- the target ------------------------------------------------------------------------
    @property
    def profile(self) -> spec.Profile:
        return self.settings.profile

    def claims(self, feature: str) -> bool:
        return self.settings.claims(feature)

    # -- probes ----------------------------------------------------------------------------
    def outcome(self, probe: str) -> ProbeOutcome:
        if probe not in self.rule.probes and not self.rule.scan:
            raise RuntimeError(f"rule {self.rule.id} reads probe {probe!r} it does not declare")
        found = self._outcomes.get(probe)
        if found is None:
            raise NotApplicable(f"probe {probe} was not run")
        if found.skipped is not None:
            raise NotApplicable(f"probe {probe} skipped: {found.skipped}")
        if found.problem is not None:
            raise HarnessProblem(f"probe {probe} could not finish: {found.problem}")
        return found

    def exchange(self, probe: str, key: str, *, judge_refusal: bool = False) -> Exchange:
        """The recorded exchange; NotApplicable when it was not sent or was refused as a whole
        (:mod:`conformance.run.refusal`). ``judge_refusal``: no answer at all is what the rule
        judges (a server that stops answering after invalid input), so it is returned."""
        outcome = self.outcome(probe)
        exchange = outcome.exchanges.get(key)
        label = f"{probe}/{key}"
        if exchange is None:
            reason = outcome.missing.get(key, "not recorded")
            raise NotApplicable(f"{label} was not sent: {reason}")
        refusal = self._refusal(outcome, key, exchange)
        if refusal is not None and not (judge_refusal and refusal in JUDGED_REFUSALS):
            self.refused[label] = (exchange, refusal)
            raise NotApplicable(summary([(label, exchange, refusal)], retries=self.retries))
        self.judged.add(label)
        return exchange

    def _refusal(self, outcome: ProbeOutcome, key: str, exchange: Exchange) -> Refusal | None:
        """The refusal the exchange ``key`` of ``outcome`` is (:func:`refusal_of`): a valid
        request the server failed is one (ERRORS-008 judges it) unless the check is the
        fuzzer's (``judge_refusals`` False), where schemathesis' acceptance check does."""
        operation = outcome.operation == "completions" and key not in outcome.auxiliary
        valid = operation and key not in outcome.invalid and self.judge_refusals
        return refusal_of(exchange, operation=operation, valid=valid)

    @property
    def retries(self) -> int:
        return self.settings.retries

    def request(self, probe: str, key: str) -> dict[str, JSON]:
        outcome = self.outcome(probe)
        body = outcome.requests.get(key)
        if key not in outcome.requests and key in outcome.missing:
            raise NotApplicable(f"{probe}/{key} was not sent: {outcome.missing[key]}")
        if not isinstance(body, dict):
            raise NotApplicable(f"{probe}/{key} has no JSON request body")
        return body

    def note(self, probe: str, key: str) -> JSON:
        outcome = self.outcome(probe)
        if key not in outcome.notes:
            raise NotApplicable(f"probe {probe} recorded no {key!r}")
        return outcome.notes[key]

    # -- judged views ----------------------------------------------------------------------
    @contextmanager
    def _reading(self, label: str) -> Iterator[None]:
        """An answer the block finds nothing to read in (NotApplicable: another status than
        200, cut off, not JSON) was not judged: a valid request refused with 400 does not
        count for the rule (in a fuzz run it would PASS on it), unless the check judged it
        before."""
        fresh = label not in self.judged
        try:
            yield
        except NotApplicable:
            if fresh:
                self.judged.discard(label)
            raise

    def answer(self, probe: str, key: str) -> Exchange:
        """The recorded exchange answered 200 (any other status: NotApplicable, not judged)."""
        with self._reading(f"{probe}/{key}"):
            exchange = self.exchange(probe, key)
            if exchange.status != 200:
                raise NotApplicable(f"{probe}/{key} answered HTTP {exchange.status}, not 200")
            return exchange

    def response(self, probe: str, key: str) -> dict[str, JSON]:
        """The JSON object of a complete 200 response (else NotApplicable)."""
        with self._reading(f"{probe}/{key}"):
            return self._response(probe, key)

    def _response(self, probe: str, key: str) -> dict[str, JSON]:
        exchange = self.exchange(probe, key)
        label = f"{probe}/{key}"
        if cut_off(exchange):
            raise NotApplicable(f"{label} was cut off after HTTP {exchange.status}: "
                                f"{exchange.error} (judged by ERRORS-008)")
        if exchange.status != 200:
            raise self._not_answered(probe, key, exchange)
        reason = unfinished(exchange)
        if reason is not None:
            raise NotApplicable(f"{label}: {reason}")
        if exchange.termination is not Termination.EOF:
            raise HarnessProblem(f"{label} did not complete: {exchange.termination}")
        try:
            value = parse_json(exchange.body)
        except ValueError as exc:
            raise NotApplicable(f"{label}: the 200 body is not JSON ({exc}): judged by "
                                "SCHEMA-001") from None
        if not isinstance(value, dict):
            raise NotApplicable(f"{label}: the 200 body is not a JSON object (judged by "
                                "SCHEMA-001)")
        return value

    def view(self, exchange: Exchange) -> StreamView:
        cached = self._views.get(id(exchange))
        if cached is None or cached.exchange is not exchange:
            cached = self._views[id(exchange)] = StreamView(exchange)
        return cached

    def raw_stream(self, probe: str, key: str) -> StreamView:
        """A 200 stream as recorded, however it ended (for the framing rules)."""
        with self._reading(f"{probe}/{key}"):
            exchange = self.exchange(probe, key)
            if exchange.status != 200:
                raise self._not_answered(probe, key, exchange)
            if not exchange.is_sse:
                raise NotApplicable(f"{probe}/{key} was not read as a stream")
            return self.view(exchange)

    def stream(self, probe: str, key: str) -> StreamView:
        """A 200 stream that ended normally, framed and encoded soundly, every payload JSON."""
        label = f"{probe}/{key}"
        with self._reading(label):
            view = self.raw_stream(probe, key)
            reason = unsound(view)
            if reason is not None:
                raise NotApplicable(f"{label}: {reason}")
            return view

    def _not_answered(self, probe: str, key: str, exchange: Exchange) -> Violation | NotApplicable:
        """What a check gets for an exchange without a 200: a valid request rejected for its
        form (a server failing it was refused before: ERRORS-008's) is this rule's failure
        too; anything else (another 2xx, a request invalid on purpose) leaves nothing to
        judge."""
        label, status = f"{probe}/{key}", exchange.status
        outcome = self.outcome(probe)
        valid = (outcome.operation == "completions" and key not in outcome.invalid
                 and key not in outcome.auxiliary)
        if (status is None or status < 300 or not valid or not self.judge_refusals):
            return NotApplicable(f"{label} answered HTTP {status}, not 200")
        hint = ""
        if self.rule.features:
            hint = (f"; if the server lacks one of its features by design "
                    f"({', '.join(self.rule.features)}), say so with --no-feature NAME")
        return Violation(
            f"{label}: the request this rule judges was refused with HTTP {status} (a valid "
            f"request, see ERRORS-008){hint}",
            expected=200, actual=status, path="status", exchange=label,
            evidence=exchange.body.decode("utf-8", "replace")[:400] or exchange.error,
        )

    # -- scanning --------------------------------------------------------------------------
    def scanned(self) -> Iterator[tuple[str, JSON, Exchange]]:
        """``(label, request body, exchange)`` of every valid completion request recorded."""
        for name, outcome in self._outcomes.items():
            if outcome.skipped is not None or outcome.operation != "completions":
                continue
            for key, exchange in outcome.exchanges.items():
                if key in outcome.invalid or key in outcome.auxiliary:
                    continue
                if exchange.termination is Termination.CONNECT_ERROR:
                    continue
                yield f"{name}/{key}", outcome.requests.get(key), exchange

    def answered(self) -> Iterator[tuple[str, Exchange, bool]]:
        """``(label, exchange, invalid)`` of every completion request of the run that got a
        status line, whether or not it was invalid on purpose (``invalid``); the requests sent
        elsewhere to learn something (a tokenizer endpoint) aside."""
        for name, outcome in self._outcomes.items():
            if outcome.skipped is not None or outcome.operation != "completions":
                continue
            for key, exchange in outcome.exchanges.items():
                if key in outcome.auxiliary or exchange.status is None:
                    continue
                yield f"{name}/{key}", exchange, key in outcome.invalid

    def refusals(self) -> list[tuple[str, Exchange, Refusal]]:
        """Every exchange of the rule's probes the server refused as a whole (what a rule that
        judged nothing SKIPs for), the ones the check asked for first."""
        found = {label: (label, exchange, refusal)
                 for label, (exchange, refusal) in self.refused.items()}
        for name in self.rule.probes:
            outcome = self._outcomes.get(name)
            if outcome is None or outcome.skipped is not None:
                continue
            for key, exchange in outcome.exchanges.items():
                refusal = self._refusal(outcome, key, exchange)
                if refusal is not None:
                    found.setdefault(outcome.label(key), (outcome.label(key), exchange, refusal))
        return list(found.values())
