"""The schemathesis hooks of a fuzz run: bound every request, and judge what was sent.

``map_case`` runs on every generated case (the examples phase's get the run's model and no
routing headers from ``before_add_examples``, and are otherwise sent as written): it
drops generated values of the headers that route a request (``X-Friendli-Team``, the user's
``--header`` names), caps generation (:func:`~conformance.fuzz.bodies.cap`) whatever the case,
and makes valid bodies servable (:func:`~conformance.fuzz.bodies.servable`), so a live endpoint
is never asked for more than ``--max-tokens`` per choice.

``filter_failure`` reconciles schemathesis' two data checks with the contract, judging the body
that was *sent* (capping may have changed it) with :func:`~conformance.fuzz.bodies.classify`:

* ``negative_data_rejection`` stands only when the body breaks the profile's schema or a
  cross-field rule; a body the profile lets a server ignore (unknown fields under
  ``unknown_fields: ignore``) or only recommends rejecting (OpenAI's limits under
  ``openai-compatible``, judged by ERRORS-007 with ``--strict``) is not a finding;
* ``positive_data_acceptance`` stands only when the body sent is valid, cross-field rules
  included (a schema-valid ``best_of < n`` must be rejected: ERRORS-004 judges that), and
  not when it names a model other than the run's and got the profile's unknown-model status.

Hooks are registered on one run's schema only (:func:`install`), never globally.
"""

from __future__ import annotations

import copy
from typing import Any, cast

import schemathesis
from hypothesis import strategies as st
from schemathesis.core.failures import AcceptedNegativeData, Failure
from schemathesis.core.parameters import ParameterLocation
from schemathesis.generation.case import Case
from schemathesis.generation.meta import CONTENT_TYPE_PROBES, coverage_scenario
from schemathesis.openapi.checks import RejectedPositiveData

from conformance.contract.validity import classify
from conformance.strategies.invalid import cross_field_cases
from spec import JSON

from .bodies import cap, servable, within_token_space
from .checks import FuzzRun, run_for, run_of

JSON_MEDIA = "application/json"


def prepare_body(body: object, run: FuzzRun) -> object:
    """The body a generated one becomes before it is sent (see the module docstring)."""
    profile = run.settings.profile
    capped = cap(body, run.caps, friendli=profile.wire == "friendli")
    if not isinstance(capped, dict):
        return capped
    if classify(capped, profile).kind in ("valid", "cross-field", "ignorable"):
        return servable(capped, profile, model=run.settings.model,
                        features=run.settings.features)
    if isinstance(capped.get("model"), str) and capped["model"]:
        renamed = {**capped, "model": run.settings.model}
        if classify(renamed, profile).invalid:
            return renamed
    return capped


def flatmap_body(context: schemathesis.HookContext, body: object) -> st.SearchStrategy[object]:
    """A valid body, or the same body with the harness's strategies' fields laid over it.

    Schemathesis draws each optional field independently and rarely combines the ones the
    contract couples (``stream`` with ``include_usage``, ``n`` with prompt lists, ``echo`` with
    ``logprobs``); :func:`conformance.strategies.completion_requests` draws exactly those
    combinations. The plain body is drawn a quarter of the time, the overlaid one half; the
    last quarter sends a whole body of the run's focused strategies instead (stop strings
    taken from what the server wrote, seeded ``n > 1`` at temperature 1, scored echoes:
    :attr:`FuzzRun.focused`), shapes that independent draws seldom combine.

    An invalid body is also sent streamed (``stream: true`` added, the body still invalid): a
    server must refuse it with a 4xx before any SSE byte, and some answer 200 with an error
    event instead (``--fault error-in-stream``), which schemathesis alone rarely draws.
    """
    operation = context.operation
    if operation is None or not isinstance(body, dict):
        return st.just(body)
    run = run_for(operation.schema)
    if run is None or run.operations.get(operation.label) != "completions":
        return st.just(body)
    profile = run.settings.profile
    kind = classify(body, profile).kind
    if kind in ("schema", "cross-field") and "stream" not in body:
        streamed = {**body, "stream": True}
        if classify(streamed, profile).kind in ("schema", "cross-field"):
            return st.sampled_from([body, streamed])
    if kind != "valid":
        return st.just(body)
    overlaid = run.overlay.map(lambda extra: {**body, **extra})
    # a quarter plain, half overlaid (its combinations, echo with logprobs or usage streams,
    # stay common enough for small runs), a quarter aimed
    return st.integers(0, 3).flatmap(
        lambda pick: st.just(body) if pick == 0 else run.focused if pick == 3 else overlaid)


def _routing_headers(run: FuzzRun) -> set[str]:
    """Headers that say who calls (``X-Friendli-Team``) or how, never what is asked: a value
    schemathesis made up would override the user's ``--header`` and reach another team."""
    names = {name.lower() for name in run.settings.profile.headers}
    names.update(name.lower() for name, _ in run.settings.headers)
    return names | {"authorization"}


def map_case(context: schemathesis.HookContext, case: schemathesis.Case) -> schemathesis.Case:
    run = run_of(case)
    if run is None:
        return case
    routing = _routing_headers(run)
    for name in [name for name in case.headers or {} if name.lower() in routing]:
        del case.headers[name]
    if run.operations.get(case.operation.label) != "completions":
        return case
    if isinstance(case.body, (dict, list, str, int, float)) and case.media_type in (None,
                                                                                   JSON_MEDIA):
        case.body = cast(Any, prepare_body(case.body, run))
    return case


def before_add_examples(context: schemathesis.HookContext,
                        examples: list[schemathesis.Case]) -> None:
    """The examples phase's cases (schemathesis applies ``map_case`` to generated cases only):
    routing headers dropped, the run's model named and token ids brought within every
    vocabulary (:func:`within_token_space`), everything else sent as the document writes it.
    An example is the contract's own request, valid or deliberately not (the
    ``stream_options`` one without ``stream`` is how ERRORS-004 meets an ignored cross-field
    rule), so it is not repaired or capped; the document's examples are small.

    One more example per cross-field rule of the profile is added, the first non-streamed
    completions example with the rule broken (:func:`cross_field_cases`): generated bodies
    are repaired to meet those rules (:func:`servable`), so without them a profile whose
    examples break none (``vllm`` takes ``stream_options: {}`` unstreamed) leaves ERRORS-004
    unjudged."""
    broken: list[schemathesis.Case] = []
    for case in examples:
        run = run_of(case)
        if run is None:
            continue
        routing = _routing_headers(run)
        for name in [name for name in case.headers or {} if name.lower() in routing]:
            del case.headers[name]
        body = case.body
        if (run.operations.get(case.operation.label) == "completions" and isinstance(body, dict)
                and isinstance(body.get("model"), str)):
            sent = {**within_token_space(body), "model": run.settings.model}
            case.body = cast(Any, sent)
            if not broken and not sent.get("stream"):
                broken = [_with_body(case, {**sent, **merge})
                          for merge, _, _ in cross_field_cases(run.settings.profile)]
    examples.extend(broken)


def _with_body(case: schemathesis.Case, body: dict[str, JSON]) -> schemathesis.Case:
    """A new example case as ``case`` but for its body (a copy of a Case does not hold)."""
    return Case(case.operation, case.method, case.path, path_parameters=case.path_parameters,
                headers=copy.copy(case.headers), cookies=case.cookies, query=case.query,
                body=cast(Any, body), media_type=case.media_type, meta=case.meta)


def _only_the_body_is_negative(case: schemathesis.Case) -> bool:
    if case.media_type not in (None, JSON_MEDIA) or coverage_scenario(case) in CONTENT_TYPE_PROBES:
        return False
    meta = case.meta
    if meta is None:
        return True
    return not any(
        component.mode.is_negative
        for location, component in meta.components.items()
        if location != ParameterLocation.BODY
    )


def filter_failure(context: schemathesis.HookContext, failure: Failure,
                   case: schemathesis.Case, response: schemathesis.Response) -> bool:
    run = run_of(case)
    if run is None or run.operations.get(case.operation.label) != "completions":
        return True
    if not isinstance(failure, (AcceptedNegativeData, RejectedPositiveData)):
        return True
    if not _only_the_body_is_negative(case):
        return True
    profile = run.settings.profile
    verdict = classify(case.body, profile)
    if isinstance(failure, AcceptedNegativeData):
        return verdict.kind in ("schema", "cross-field")
    if _asks_another_model(case.body, run.settings.model):
        return getattr(failure, "status_code", None) not in profile.unknown_model_statuses
    return verdict.kind == "valid"


def _asks_another_model(body: object, model: str) -> bool:
    """A body naming a model the run does not test (one the hooks did not rewrite): the server
    may refuse it with the profile's unknown-model status, as LiteLLM answers 400."""
    return isinstance(body, dict) and isinstance(body.get("model"), str) and (
        body["model"] != model)


def install(schema: schemathesis.BaseSchema) -> None:
    """Register this module's hooks on ``schema`` only."""
    schema.hooks.register_hook_with_name(flatmap_body, "flatmap_body")
    schema.hooks.register_hook_with_name(map_case, "map_case")
    schema.hooks.register_hook_with_name(before_add_examples, "before_add_examples")
    schema.hooks.register_hook_with_name(filter_failure, "filter_failure")
