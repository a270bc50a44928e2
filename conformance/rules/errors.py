"""Invalid input: the profile's 4xx with the error envelope, never 5xx, never 200, and the
server still answering afterwards.

Spec: ``spec/completions.yaml`` ``components/responses/BadRequest`` ("The request is invalid
(OpenAI profiles); ``error.param`` names the field") and ``UnprocessableEntity`` (FriendliAI),
the profiles' ``errors.invalid_request`` statuses, ``ErrorResponse`` ("The error envelope
``{"error": {"message", "type", "param", "code"}}``") and ``x-cross-field-rules``. Bug classes
12, 20 and 31.
"""

from __future__ import annotations

from collections.abc import Iterator

from conformance.model import NotApplicable, Violation, fail_each
from conformance.probes import PROBES
from conformance.run import refusal
from conformance.run.check_context import CheckContext
from conformance.run.refusal import Refusal
from conformance.transport import Exchange
from conformance.views.endings import cut_off, cut_short
from conformance.wire_json import parse_json

from .base import BUGS, DOC, MUST, SCHEMAS, SHOULD, SPEC, rule

RESPONSES = f"{DOC}#/components/responses"


def _cases(ctx: CheckContext, kinds: tuple[str, ...]) -> Iterator[tuple[str, dict, Exchange]]:
    cases = ctx.note("invalid", "cases")
    if not isinstance(cases, dict):
        raise NotApplicable("the invalid probe recorded no cases")
    for key, case in cases.items():
        if case.get("kind") not in kinds:
            continue
        try:
            exchange = ctx.exchange("invalid", key)
        except NotApplicable:
            continue  # refused as a whole, or not sent: a rule judging no case SKIPs
        yield key, case, exchange


ALL_KINDS = ("schema", "unknown-field", "limit", "cross-field", "malformed")
REFUSED = "refused"
"""The kind of a case that is a valid request answered with an error: ``conformance judge``
files a recorded one so, and only ERRORS-003 (every error body) and CONTENT-TYPE-003 judge it;
no run or fuzz probe sends one as an invalid case."""


def _excerpt(exchange: Exchange) -> str:
    return exchange.body.decode("utf-8", "replace")[:400]


def _status_rule(ctx: CheckContext, kinds: tuple[str, ...]) -> None:
    """Every case of ``kinds`` that got a status outside the profile's (one finding each)."""
    allowed = ctx.profile.invalid_request_statuses
    found = []
    for key, case, exchange in _cases(ctx, kinds):
        status = exchange.status
        if status is not None and status >= 500:
            continue  # ERRORS-002
        if status not in allowed:
            found.append(Violation(
                f"invalid input ({key}: {case.get('why')}) got HTTP {status}",
                expected=list(allowed), actual=status, path="status",
                exchange=f"invalid/{key}", evidence=_excerpt(exchange),
            ))
    fail_each(found)


@rule(
    "ERRORS-001", MUST, "Invalid input gets the profile's 4xx",
    requirement="A request the contract's schema rejects (out of range, wrong type, malformed "
    "JSON), streamed or not, is answered with the profile's status (OpenAI 400, FriendliAI "
    "422) before any event-stream bytes (unknown fields: ERRORS-009).",
    citation=f"{RESPONSES}/BadRequest, UnprocessableEntity; spec/profiles/*.yaml "
    f"errors.invalid_request; {BUGS} #12, #31",
    source=SPEC, probes=("invalid",), faults=("invalid-input-200", "error-in-stream"),
    fuzz="invalid",
)
def invalid_input_rejected(ctx: CheckContext) -> None:
    _status_rule(ctx, ("schema", "malformed"))


@rule(
    "ERRORS-002", MUST, "Invalid input never gets a 5xx",
    requirement="No invalid request is answered with a server error (5xx).",
    citation=f"{RESPONSES}/BadRequest; {BUGS} #31",
    source=SPEC, probes=("invalid",), faults=("invalid-input-500",), fuzz="invalid",
)
def no_server_error(ctx: CheckContext) -> None:
    fail_each([
        Violation(
            f"invalid input ({key}: {case.get('why')}) got a server error",
            expected="4xx", actual=exchange.status, path="status",
            exchange=f"invalid/{key}", evidence=_excerpt(exchange),
        )
        for key, case, exchange in _cases(ctx, ALL_KINDS)
        if exchange.status is not None and exchange.status >= 500
    ])


@rule(
    "ERRORS-003", MUST, "Errors carry the error envelope",
    requirement='Every error body is JSON matching the profile\'s error schema: {"error": '
    '{"message", "type", "param", "code"}} (FriendliAI also FastAPI\'s {"detail": [...]}).',
    citation=f"{SCHEMAS}/ErrorResponse, LenientErrorResponse, FriendliErrorResponse; "
    f"{BUGS} #31",
    source=SPEC, probes=("invalid",), faults=("error-no-envelope",), fuzz="invalid",
)
def error_envelope(ctx: CheckContext) -> None:
    validator = ctx.profile.validator("error")
    found = []
    for key, _, exchange in _cases(ctx, (*ALL_KINDS, REFUSED)):
        if exchange.status is None or exchange.status < 400:
            continue
        cut = cut_short(exchange)
        if cut is not None:  # an error body read in part is no envelope to judge
            ctx.judged.discard(f"invalid/{key}")
            ctx.pass_over(f"invalid/{key}", cut)
            continue
        try:
            body = parse_json(exchange.body)
        except ValueError:
            found.append(Violation(
                f"the HTTP {exchange.status} error body is not JSON",
                expected='{"error": {...}}', actual=_excerpt(exchange)[:120], path="$",
                exchange=f"invalid/{key}", evidence=_excerpt(exchange),
            ))
            continue
        error = next(validator.iter_errors(body), None)
        if error is not None:
            found.append(Violation(
                f"the error body does not match the error schema: {error.message}",
                expected='{"error": {"message", "type", "param", "code"}}',
                actual=_excerpt(exchange)[:200],
                path="/".join(map(str, error.absolute_path)) or "$",
                exchange=f"invalid/{key}", evidence=_excerpt(exchange),
            ))
    fail_each(found)


@rule(
    "ERRORS-004", MUST, "Cross-field violations are rejected",
    requirement="Requests breaking a cross-field rule (best_of < n, best_of > 1 streamed, "
    "stream_options without stream; FriendliAI: prompt and tokens, a seed list not of length "
    "n), streamed or not, get the profile's 4xx.",
    citation=f"{DOC}#/x-cross-field-rules; {BUGS} #20",
    source=SPEC, probes=("invalid",),
    faults=("stream-options-ignored-error", "invalid-input-200", "error-in-stream"), fuzz="invalid",
)
def cross_field_rejected(ctx: CheckContext) -> None:
    _status_rule(ctx, ("cross-field",))


@rule(
    "ERRORS-005", SHOULD, "error.param names the offending field",
    requirement="For a single invalid field, the error envelope's param names that field.",
    citation=f"{RESPONSES}/BadRequest (\"error.param names the field\")",
    source=SPEC, probes=("invalid",), faults=("error-param-missing",),
)
def error_param(ctx: CheckContext) -> None:
    found = []
    for key, case, exchange in _cases(ctx, ("schema", "unknown-field")):
        body = _error_object(exchange)
        request = ctx.request("invalid", key)
        fields = [k for k in request if k not in ("model", "prompt", "max_tokens")]
        if body is None or len(fields) != 1 or key.endswith("streamed"):
            continue
        if body.get("param") != fields[0]:
            found.append(Violation(
                f"error.param does not name the invalid field ({case.get('why')})",
                expected=fields[0], actual=body.get("param"), path="error.param",
                exchange=f"invalid/{key}", evidence=_excerpt(exchange),
            ))
    fail_each(found)


def _error_object(exchange: Exchange) -> dict | None:
    if exchange.status is None or not 400 <= exchange.status < 500:
        return None
    try:
        body = parse_json(exchange.body)
    except ValueError:
        return None
    error = body.get("error") if isinstance(body, dict) else None
    return error if isinstance(error, dict) else None


@rule(
    "ERRORS-006", SHOULD, "The server still answers after invalid input",
    requirement="After the invalid requests, the valid request they were all made from (the "
    "same model, prompt and max_tokens) is answered 200.",
    citation=f"{BUGS} #31 (\"and the server still answers afterwards\")",
    source=SPEC, probes=("invalid",), faults=("error-cached",),
)
def healthy_after(ctx: CheckContext) -> None:
    exchange = ctx.exchange("invalid", "health", judge_refusal=True)
    if exchange.status is None and not _answered_invalid(ctx):
        # a server that answered none of the invalid requests either did not stop answering
        # because of them: it never answered (the run as a whole says so)
        raise NotApplicable(refusal.summary([("invalid/health", exchange, Refusal.NO_ANSWER)]))
    if exchange.status != 200:
        _blame_only_invalid_input(ctx)
        raise Violation(
            "a valid request after the invalid ones failed", expected=200,
            actual=exchange.status or str(exchange.termination), path="status",
            exchange="invalid/health", evidence=_excerpt(exchange),
        )


@rule(
    "ERRORS-007", SHOULD, "OpenAI's limits are enforced",
    requirement="An OpenAI-compatible server rejects what breaks OpenAI's limits (logprobs "
    "above 5, more than 4 stop strings, best_of above 20); many raise them (vLLM allows 20 "
    "logprobs), so this is a strict-parity check.",
    citation=f"{SCHEMAS}/Logprobs; spec/profiles/openai-compatible.yaml limits; {BUGS} "
    "peer check 5 (\"treat >5 as a strict-mode check\")",
    source=SPEC, probes=("invalid",), traits=("openai_limits=recommended",),
    faults=("invalid-input-200",), fuzz="invalid",
)
def openai_limits_enforced(ctx: CheckContext) -> None:
    _status_rule(ctx, ("limit",))


def _blame_only_invalid_input(ctx: CheckContext) -> None:
    """NotApplicable when the run's other valid requests (those of the other probes, sent
    around the invalid ones) got no 2xx either: a server that fails every valid request does
    not fail the health check because of invalid input. ERRORS-008 judges those failures; a
    run whose other requests were all refused to retry later says so. With no other valid
    request in the run (ERRORS-006 selected alone), the health check is judged as it is."""
    others = [(label, exchange) for label, _, exchange in ctx.scanned()
              if not label.startswith("invalid/")]
    if not others or any(e.status is not None and 200 <= e.status < 300 for _, e in others):
        return
    later = [(label, exchange, kind) for label, exchange in others
             if (kind := refusal.refusal_of(exchange)) in (Refusal.RATE_LIMITED,
                                                            Refusal.UNAVAILABLE)]
    if len(later) == len(others):
        raise NotApplicable(refusal.summary(later, retries=ctx.retries))
    label, first = next((label, e) for label, e in others
                        if refusal.refusal_of(e) not in (Refusal.RATE_LIMITED,
                                                         Refusal.UNAVAILABLE))
    raise NotApplicable(
        f"no other valid request of the run got 2xx either ({label}: {_status(first)}): the "
        "server fails valid requests whatever came before them (judged by ERRORS-008)")


def _answered_invalid(ctx: CheckContext) -> bool:
    """Whether the server answered any of the invalid requests with a status line."""
    outcome = ctx.outcome("invalid")
    return any(outcome.exchanges[key].status is not None
               for key in outcome.invalid if key in outcome.exchanges)


def _status(exchange: Exchange) -> int | str:
    """The HTTP status, or how the connection ended when there was none (or it was cut)."""
    if exchange.status is None:
        return str(exchange.termination)
    return f"{exchange.status}, cut off" if cut_off(exchange) else exchange.status




def _valid_probes() -> tuple[str, ...]:
    return tuple(name for name in PROBES if name != "invalid")


@rule(
    "ERRORS-008", MUST, "Valid requests get 2xx",
    requirement="Every request the probes send that the contract says is valid for the "
    "profile (and whose features the server claims) is answered 2xx; any other status, or a "
    "connection that ends without a whole response, fails (429 and 503 are retried, then "
    "SKIP; a stream cut short is SSE-008's).",
    citation=f"{DOC}#/paths/~1v1~1completions/post/responses/200; {BUGS} #17, #24, #32",
    source=SPEC, probes=_valid_probes(),
    faults=("prompt-list-500", "token-prompt-rejected", "best-of-equal-n-rejected",
            "disconnect-mid-body", "greedy-n-refused"),
)
def valid_requests_succeed(ctx: CheckContext) -> None:
    failed: list[tuple[str, Exchange]] = []
    later: list[tuple[str, Exchange, Refusal]] = []
    for label, _, exchange in ctx.scanned():
        if label.startswith("invalid/"):
            continue  # the health check after invalid input is ERRORS-006's
        kind = refusal.refusal_of(exchange)
        if kind in (Refusal.RATE_LIMITED, Refusal.UNAVAILABLE):
            later.append((label, exchange, kind))
            continue
        ctx.judge(label)
        if exchange.status is None or not 200 <= exchange.status < 300 or cut_off(exchange):
            failed.append((label, exchange))
    if failed:
        listing = ", ".join(f"{name} ({_status(e)})" for name, e in failed)
        cases = [
            Violation(
                f"a valid request got {_status(exchange)}", expected="2xx",
                actual=_status(exchange), path="status", exchange=label,
                evidence=_excerpt(exchange) or exchange.error,
            )
            for label, exchange in failed
        ]
        cases[0].message = f"{len(failed)} valid request(s) did not get 2xx: {listing}"
        fail_each(cases)
    if later:  # "every valid request" cannot be judged while some were not answered yet
        raise NotApplicable(refusal.summary(later, retries=ctx.retries))


@rule(
    "ERRORS-009", SHOULD, "Unknown fields are rejected",
    requirement="Under a profile that rejects unknown request fields (openai), a request with "
    "one gets the profile's 4xx. OpenAI's API does so, but no published document requires "
    "it and most servers ignore such fields: a SHOULD (--strict enforces it).",
    citation="spec/profiles/openai.yaml unknown_fields; OpenAI's answer to one: "
    "\"Unrecognized request argument supplied\"",
    source=SPEC, probes=("invalid",), traits=("unknown_fields=reject",),
    faults=("unknown-fields-ignored",),
)
def unknown_fields_rejected(ctx: CheckContext) -> None:
    _status_rule(ctx, ("unknown-field",))
