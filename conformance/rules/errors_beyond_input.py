"""Errors beyond malformed input: a body without ``model``, and a server's own 5xx.

Gateways meet these first. A gateway that fills in a model of its own for a body without one
(the Portkey gateway sends ``"text-davinci-003"`` upstream) answers for a model the client
never named; a gateway whose upstream is down answers with a page of its own (``500
{"html-message": "... ECONNREFUSED ..."}``) that no client reads as an API error.

Spec: the request schemas of ``spec/completions.yaml`` (``required: [model, ...]``), the
profiles' ``errors.invalid_request`` statuses and ``defaultable_fields`` ("a single-model
server answers a body without ``model`` with its one model": ``vllm``, ``openai-compatible``),
and ``ErrorResponse`` ("The error envelope ``{"error": {"message", "type", "param",
"code"}}``").
"""

from __future__ import annotations

import re

from conformance.model import HarnessProblem, NotApplicable, Violation, fail_each
from conformance.run.check_context import CheckContext
from conformance.run.refusal import NOT_JUDGED, Refusal, refusal_of, summary
from conformance.transport import Exchange
from conformance.views.endings import cut_off, cut_short
from conformance.wire_json import parse_json
from spec import JSON

from .base import DOC, MUST, SCHEMAS, SHOULD, SPEC, rule
from .common import choice_of

RESPONSES = f"{DOC}#/components/responses"
MISSING = "model-missing/missing"
NOT_RECORDED = "no_recorded_exchange"
"""The error code of ``mockserver --replay`` for a request its recording does not hold: a
recording made before a probe existed, never the recorded server's answer."""
NAMES_MODEL = re.compile(r"\bmodel\b", re.IGNORECASE)


def _json(exchange: Exchange) -> JSON:
    try:
        return parse_json(exchange.body)
    except ValueError:
        return None


def _excerpt(exchange: Exchange) -> str:
    return exchange.body.decode("utf-8", "replace")[:400]


def not_recorded(exchange: Exchange) -> bool:
    """Whether ``exchange`` is a replay's answer to a request its recording does not hold."""
    body = _json(exchange)
    error = body.get("error") if isinstance(body, dict) else None
    return (exchange.status == 404 and isinstance(error, dict)
            and error.get("code") == NOT_RECORDED)


def names_model(exchange: Exchange) -> bool:
    """Whether an error answer names ``model``: ``error.param`` is ``"model"``, or its message
    says the word (OpenAI's "you must provide a model parameter" has ``param: null``), or
    FastAPI's ``detail`` locates a fault at ``model``; a body that is not JSON, by its text."""
    body = _json(exchange)
    if not isinstance(body, dict):
        return NAMES_MODEL.search(exchange.body.decode("utf-8", "replace")) is not None
    said: list[object] = [body.get("message")]
    error = body.get("error")
    if isinstance(error, dict):
        if error.get("param") == "model":
            return True
        said.append(error.get("message"))
    else:
        said.append(error)
    detail = body.get("detail")
    if isinstance(detail, list):
        for item in detail:
            if isinstance(item, dict) and "model" in (item.get("loc") or ()):
                return True
    else:
        said.append(detail)
    return any(isinstance(text, str) and NAMES_MODEL.search(text) for text in said)


def _served_models(ctx: CheckContext) -> set[str]:
    """The model under test, and the name the server gave it when asked for it by name (the
    greedy answer's ``model``): a server may report another spelling of its own model."""
    models = {ctx.settings.model}
    try:
        greedy = ctx.outcome("greedy").exchanges.get("ns")
    except (NotApplicable, HarnessProblem):  # nothing to learn the name from
        return models
    body = _json(greedy) if greedy is not None and greedy.status == 200 else None
    if isinstance(body, dict) and isinstance(body.get("model"), str):
        models.add(body["model"])
    return models


def _greedy_text_agrees(ctx: CheckContext) -> bool:
    """Whether the answer without model is the greedy answer's start (the same prompt at
    temperature 0): then the model under test answered, whatever the name it gave itself
    (llama-cpp-python names its model file's path when the body names none). A model put in
    by a gateway writes other text."""
    try:
        text = choice_of(ctx, "model-missing", "missing").get("text")
        whole = choice_of(ctx, "greedy", "ns").get("text")
    except NotApplicable:
        return False
    return isinstance(text, str) and bool(text) and isinstance(whole, str) and (
        whole.startswith(text))


@rule(
    "ERRORS-010", MUST, "A body without model is refused naming model",
    requirement="A request without `model` gets the profile's 4xx (errors.invalid_request) "
    "whose error names `model` (error.param, or its message); where the profile lets a server "
    "default the model (defaultable_fields: vllm, openai-compatible), an answer by the model "
    "under test (its name, or the greedy answer's text) passes too. A server or gateway that "
    "puts a model of its own in its place (and answers 404, or with another model) fails.",
    citation=f"{DOC}#/components/schemas/CompletionRequest (required: model); "
    f"spec/profiles/*.yaml errors.invalid_request, defaultable_fields; {RESPONSES}/BadRequest",
    source=SPEC, probes=("model-missing", "greedy"),
    faults=("model-substituted", "invalid-input-500"),
)
def model_required(ctx: CheckContext) -> None:
    outcome = ctx.outcome("model-missing")
    exchange = outcome.exchanges.get("missing")
    if exchange is not None and not_recorded(exchange):
        raise NotApplicable(f"{NOT_JUDGED}: {MISSING} is not in the replayed recording (made "
                            "before this probe existed): record the server again to judge it")
    if exchange is not None and exchange.status == 404:
        # not the refusal of a path or model the client named: the client named no model
        _blame_only_the_missing_model(ctx, exchange)
        ctx.judge(MISSING)
        raise Violation(
            "a body without model got HTTP 404: the server looked for a model the client did "
            "not name (a model of its own put in)",
            expected=list(ctx.profile.invalid_request_statuses), actual=404, path="status",
            exchange=MISSING, evidence=_excerpt(exchange))
    exchange = ctx.exchange("model-missing", "missing")  # SKIPs a refusal, naming it
    status = exchange.status
    if status is not None and 200 <= status < 300:
        _judge_served(ctx, exchange)
        return
    if cut_off(exchange) or status is None:
        raise NotApplicable(f"{MISSING} got no whole answer: "
                            f"{exchange.error or exchange.termination}")
    allowed = ctx.profile.invalid_request_statuses
    if status not in allowed:
        _blame_only_the_missing_model(ctx, exchange)
        raise Violation(
            f"a body without model got HTTP {status}", expected=list(allowed), actual=status,
            path="status", exchange=MISSING, evidence=_excerpt(exchange))
    if not names_model(exchange):
        raise Violation(
            "the error for a body without model does not name model",
            expected='error.param "model", or a message naming model',
            actual=_excerpt(exchange)[:200], path="error", exchange=MISSING,
            evidence=_excerpt(exchange))


def _blame_only_the_missing_model(ctx: CheckContext, exchange: Exchange) -> None:
    """NotApplicable when no valid completion request of the run got a 2xx either: a server
    that fails every request (a wrong path, an upstream down) says nothing of a missing model.
    ERRORS-008 judges those failures; a run whose requests were all refused to retry later
    says so."""
    others = [(label, e) for label, _, e in ctx.scanned()]
    if not others or any(e.status is not None and 200 <= e.status < 300 for _, e in others):
        return
    later = [(label, e, kind) for label, e in others
             if (kind := refusal_of(e)) in (Refusal.RATE_LIMITED, Refusal.UNAVAILABLE)]
    if len(later) == len(others):
        raise NotApplicable(summary(later, retries=ctx.retries))
    raise NotApplicable(
        f"{MISSING} got HTTP {exchange.status}, and no valid request of the run got 2xx "
        "either: the server fails requests whatever their model (judged by ERRORS-008)")


def _judge_served(ctx: CheckContext, exchange: Exchange) -> None:
    """A 2xx to a body without model: only where the profile lets the server default it, and
    only by the model under test."""
    if "model" not in ctx.profile.defaultable_fields:
        raise Violation(
            f"a body without model was answered HTTP {exchange.status}: the {ctx.profile.name} "
            "profile requires model (no server default)",
            expected=list(ctx.profile.invalid_request_statuses), actual=exchange.status,
            path="status", exchange=MISSING, evidence=_excerpt(exchange))
    answer = ctx.response("model-missing", "missing")
    served = answer.get("model")
    if not isinstance(served, str):
        raise NotApplicable(f"{MISSING}: the answer names no model, so which model answered "
                            "cannot be told")
    ours = _served_models(ctx)
    if served not in ours and not _greedy_text_agrees(ctx):
        raise Violation(
            f"a body without model was answered by the model {served!r}, not the one under test",
            expected=sorted(ours), actual=served, path="model", exchange=MISSING,
            evidence=_excerpt(exchange))


@rule(
    "ERRORS-011", SHOULD, "A server error carries the error envelope",
    requirement="Every 5xx answer to a completion request (one the server, or the upstream "
    "behind a gateway, failed) is JSON in the profile's error envelope, so a client reads it "
    "as the API's error and can tell why; invalid input's answers are ERRORS-003's.",
    citation=f"{SCHEMAS}/ErrorResponse, LenientErrorResponse, FriendliErrorResponse",
    source=SPEC, probes=("greedy",), scan=True, faults=("upstream-down-page",),
)
def server_errors_enveloped(ctx: CheckContext) -> None:
    validator = ctx.profile.validator("error")
    found = []
    for label, exchange, invalid in ctx.answered():
        if invalid and label.startswith("invalid/"):
            continue  # every error body of invalid input: ERRORS-003
        status = exchange.status
        if status is None or status < 500:
            if 200 <= (status or 0) < 300:  # answered: no server error to hold against it
                ctx.judge(label)
            continue  # a 4xx, refused or not, says nothing of the server's own errors
        cut = cut_short(exchange)
        if cut is not None or cut_off(exchange):
            ctx.pass_over(label, cut or "the connection broke before the whole body came")
            continue
        ctx.judge(label)
        try:
            body = parse_json(exchange.body)
        except ValueError:
            found.append(Violation(
                f"the HTTP {status} answer is not JSON", expected='{"error": {...}}',
                actual=_excerpt(exchange)[:120], path="$", exchange=label,
                evidence=_excerpt(exchange)))
            continue
        error = next(validator.iter_errors(body), None)
        if error is not None:
            found.append(Violation(
                f"the HTTP {status} answer is not the error envelope: {error.message}",
                expected='{"error": {"message", "type", "param", "code"}}',
                actual=_excerpt(exchange)[:200],
                path="/".join(map(str, error.absolute_path)) or "$", exchange=label,
                evidence=_excerpt(exchange)))
    fail_each(found)
