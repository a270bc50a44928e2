"""``GET /v1/models``: the model list, in OpenAI's shape.

Spec: ``ModelList`` in ``spec/completions.yaml`` (``{object: list, data: [Model]}``, ``Model``
requiring ``id, object: model, created, owned_by``).
"""

from __future__ import annotations

from conformance.model import NotApplicable, Violation
from conformance.run.check_context import CheckContext
from conformance.views.endings import cut_short
from conformance.wire_json import parse_json

from .base import MUST, SCHEMAS, SHOULD, SPEC, rule


def _models(ctx: CheckContext) -> object:
    exchange = ctx.answer("models", "list")
    cut = cut_short(exchange)
    if cut is not None:  # a listing read in part is not the server's listing
        raise NotApplicable(f"models/list: {cut}")
    try:
        return parse_json(exchange.body)
    except ValueError:
        return exchange.body.decode("utf-8", "replace")


@rule(
    "MODELS-001", MUST, "GET /models returns a ModelList",
    requirement='GET /models answers 200 with {"object": "list", "data": [{id, object: '
    '"model", created, owned_by}, ...]}.',
    citation=f"{SCHEMAS}/ModelList",
    source=SPEC, probes=("models",), traits=("operation=models",), faults=("models-shape-wrong",),
    fuzz="models-list",
)
def models_shape(ctx: CheckContext) -> None:
    body = _models(ctx)
    for error in ctx.profile.validator("models").iter_errors(body):
        raise Violation(
            f"the model list does not match ModelList: {error.message}",
            expected='{"object": "list", "data": [...]}', actual=str(body)[:200],
            path="/".join(map(str, error.absolute_path)) or "$", exchange="models/list",
            evidence=ctx.exchange("models", "list").body.decode("utf-8", "replace")[:400],
        )


@rule(
    "MODELS-002", SHOULD, "The model under test is listed",
    requirement="The model the completions are requested from appears in GET /models.",
    citation=f"{SCHEMAS}/ModelList",
    source=SPEC, probes=("models",), traits=("operation=models",), faults=("model-unlisted",),
    fuzz="models-list",
)
def model_listed(ctx: CheckContext) -> None:
    body = _models(ctx)
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        raise NotApplicable("the model list has no data array (MODELS-001)")
    ids = [m.get("id") for m in data if isinstance(m, dict)]
    if ctx.settings.model not in ids:
        raise Violation(
            "the model under test is not listed", expected=ctx.settings.model, actual=ids,
            path="data[].id", exchange="models/list", evidence=str(ids)[:300],
        )
