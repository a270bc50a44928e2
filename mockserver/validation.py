"""Request validation: the contract's JSON Schema, then its cross-field rules, then the model.

Spec: the request bodies ``CompletionRequest`` / ``FriendliCompletionRequest`` (both reject
unknown fields) and ``x-cross-field-rules`` in ``spec/completions.yaml``. Invalid input gets
400 on OpenAI's route and 422 on FriendliAI's (the profiles' ``errors.invalid_request``), with
``error.param`` naming the offending top-level field; an unknown model gets 404
``model_not_found``. A vendor profile served with ``--profile`` (``mockserver.contracts``)
brings its own statuses and its own policy on unknown fields. Pure (no aiohttp):
``python -m mockserver.render`` validates with it too.

A valid body comes back with its integral floats as ints (JSON Schema: ``3.0`` *is* an
integer), so everything after validation -- faults, the result cache's keys, the wire
conversion, the engine -- reads ``"seed": 3.0`` as the int it is, converted here once.

Valid bodies take a fast path (``jsonschema_rs``, a dependency of schemathesis); only an
invalid body pays for the pure-Python validator that explains the error, and that validator's
verdict is the one that counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from jsonschema.exceptions import ValidationError, best_match

import spec
from reference_engine.errors import InvalidRequestError
from spec import JSON

from .contracts import BUILT_IN, ServedContract
from .errors import ApiError
from .wire.formats import Wire
from .wire.requests import integral_numbers, served_model

try:  # the fast path is optional
    import jsonschema_rs
except ImportError:  # pragma: no cover
    jsonschema_rs = None  # type: ignore[assignment]

INVALID_STATUS: Mapping[Wire, int] = {
    contract.wire: contract.invalid_status for contract in BUILT_IN
}


class RequestValidator:
    """Validates completion request bodies of one served contract; build once, share freely.

    ``contract`` is a :class:`ServedContract` (a profile's name resolves to its wire's built-in
    route through :func:`~mockserver.contracts.builtin_contract`)."""

    def __init__(self, contract: ServedContract, *, model_id: str) -> None:
        self.contract = contract
        self.name = contract.name
        self.wire: Wire = contract.wire
        self.status = contract.invalid_status
        self.model_id = model_id
        self._schema = contract.profile.schema("request")
        self._properties = frozenset(self._schema.get("properties", {}))
        self._python = spec.validator_for(self._schema)
        self._fast = (
            jsonschema_rs.Draft202012Validator(self._schema) if jsonschema_rs is not None else None
        )

    def error(self, message: str, *, param: str | None, code: str = "invalid_value",
              rule: str | None = None) -> ApiError:
        """An invalid-request error with this route's status."""
        return ApiError(self.status, message, param=param, code=code, rule=rule)

    def validate(self, body: JSON) -> dict[str, JSON]:
        """``body``, integral floats made ints, if it is a valid request for a served model;
        raise :class:`ApiError` otherwise. The rules judge the body as sent."""
        if not isinstance(body, dict):
            raise self.error(
                f"The request body must be a JSON object, got {_json_type(body)}.",
                param=None,
                code="invalid_type",
            )
        body = self._defaulted(self._served_fields(body))
        self._check_schema(body)
        violations = spec.cross_field_violations(body, self.contract.profile.name)
        if violations:
            first = violations[0]
            raise self.error(first.message, param=first.param, rule=first.rule_id)
        self.check_model(body["model"])
        return cast("dict[str, JSON]", integral_numbers(body))  # a dict stays a dict

    def check_model(self, model: str) -> None:
        """404 unless ``model`` is the engine's (FriendliAI may add ``:ADAPTER_ROUTE``)."""
        if served_model(model, wire=self.wire) != self.model_id:
            raise ApiError(
                self.contract.unknown_model_status,
                f"The model `{model}` does not exist; this server serves `{self.model_id}` "
                "(see GET /v1/models).",
                param="model",
                code="model_not_found",
            )

    def engine_error(self, error: InvalidRequestError) -> ApiError:
        """The answer to an engine (or wire-conversion) error: this route's status, its code."""
        return self.error(error.message, param=error.param, code=error.code)

    def _defaulted(self, body: dict[str, JSON]) -> dict[str, JSON]:
        """``body`` with the contract's defaultable fields filled in where left out: ``model``
        is the served model (no other field has a served default)."""
        if "model" in self.contract.defaulted_fields and "model" not in body:
            return {**body, "model": self.model_id}
        return body

    def _served_fields(self, body: dict[str, JSON]) -> dict[str, JSON]:
        """``body`` under the contract's ``unknown_fields`` policy: a field outside the
        profile's request schema is dropped unread (``ignore``), or left for the schema, which
        is closed, to refuse (``reject``)."""
        if self.contract.unknown_fields != "ignore":
            return body
        fields = self._properties
        if all(name in fields for name in body):
            return body
        return {name: value for name, value in body.items() if name in fields}

    def _unknown_field(self, unknown: list[str]) -> ApiError:
        name = unknown[0] if unknown else None
        error = self.error(
            f"Unrecognized request argument supplied: {name}. Remove it; the fields of "
            f"this route are listed in GET /openapi.yaml ({self.contract.request_schema}).",
            param=name,
            code="unknown_parameter",
        )
        error.unknown = tuple(unknown)
        return error

    def _check_schema(self, body: dict[str, JSON]) -> None:
        if self._fast is not None:
            try:
                if self._fast.is_valid(body):
                    return
            except Exception:
                pass
        error = best_match(self._python.iter_errors(body))
        if error is not None:
            raise self._schema_error(error, body)

    def _schema_error(self, error: ValidationError, body: dict[str, JSON]) -> ApiError:
        path = list(error.absolute_path)
        if error.validator == "additionalProperties" and not path:
            unknown = sorted(name for name in body if name not in self._properties)
            return self._unknown_field(unknown)
        if error.validator == "required" and not path:
            missing = [name for name in error.validator_value if name not in body]
            name = missing[0] if missing else None
            return self.error(f"Missing required parameter: '{name}'.", param=name,
                              code="missing_required_parameter")
        alternatives = _alternatives(error) if not path else []
        if alternatives:
            return self.error(f"Exactly one of {' and '.join(f'`{a}`' for a in alternatives)}"
                              " is required.", param=alternatives[0])
        param = str(path[0]) if path else None
        location = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)[1:]
        code = "invalid_type" if error.validator == "type" else "invalid_value"
        return self.error(f"{location or 'body'}: {_short(error.message)}", param=param, code=code)


def _alternatives(error: ValidationError) -> list[str]:
    """The fields of which a ``oneOf`` asks for exactly one (FriendliAI's ``prompt`` and
    ``tokens``: each branch requires one of them), or [] for another kind of error."""
    if error.validator != "oneOf" or not isinstance(error.validator_value, list):
        return []
    names = []
    for branch in error.validator_value:
        required = branch.get("required") if isinstance(branch, dict) else None
        if not isinstance(required, list) or len(required) != 1:
            return []
        names.append(str(required[0]))
    return names


def _json_type(value: JSON) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else type(value).__name__


def _short(message: str, limit: int = 300) -> str:
    return message if len(message) <= limit else message[: limit - 3] + "..."
