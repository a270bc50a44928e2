"""Faults in ``GET /v1/models``: the shape of the listing and what it lists.

Spec: ``ModelList`` in ``spec/completions.yaml`` (``{object: list, data: [Model]}``, ``Model``
requiring ``id, object: model, created, owned_by``). Only OpenAI's wire has a model listing.
"""

from __future__ import annotations

from spec import JSON

from .base import OPENAI, Fault, FaultContext
from .registry import register


class _ModelsFault(Fault):
    hook = "response"
    operation = "models"
    wires = OPENAI


@register
class ModelsShapeWrong(_ModelsFault):
    name = "models-shape-wrong"
    description = "`GET /v1/models` returns a bare list of models, not `{object: list, data}`."
    breaks = "GET /v1/models returns {\"object\": \"list\", \"data\": [...]}."

    def alter_response(self, body: JSON, ctx: FaultContext) -> JSON:
        return body.get("data", []) if isinstance(body, dict) else body


@register
class ModelUnlisted(_ModelsFault):
    name = "model-unlisted"
    description = "`GET /v1/models` lists no models: the served model is missing from `data`."
    breaks = "The model the server answers completions for appears in GET /v1/models."

    def alter_response(self, body: JSON, ctx: FaultContext) -> JSON:
        if isinstance(body, dict) and isinstance(body.get("data"), list):
            body["data"] = []
        return body
