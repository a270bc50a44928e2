"""Schemathesis against the live mock: positive and negative requests from the contract.

Every generated request over both completion operations and ``GET /v1/models`` must pass
``not_a_server_error``, ``response_schema_conformance`` (streams too: SSE is decoded into the
list of its ``data`` payloads, which is what the contract's ``text/event-stream`` schemas
describe), ``status_code_conformance``, ``content_type_conformance``,
``negative_data_rejection`` and ``positive_data_acceptance``.

Positive bodies are kept small and servable before they are sent (``servable``): the schema
cannot say that token ids must be in the vocabulary, that prompt + ``max_tokens`` must fit the
context, or the cross-field rules, so those are repaired; a body is only ever changed into
another valid body, so negative cases stay negative.

``test_contract`` draws 50 examples in the default suite; ``test_contract_long`` draws 1,000 in
the nightly stage (``.ci/nightly``), where ``.ci/run``'s own fuzz of the mock already holds it to
schemathesis' checks for a minute.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from mock_live import ENGINE, MODEL, LiveServer
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    positive_data_acceptance,
    response_schema_conformance,
    status_code_conformance,
)

import spec
from mockserver import sse
from mockserver.wire import integral_numbers

DOCUMENT = Path(spec.__file__).parent / "completions.yaml"
CHECKS = [
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
    content_type_conformance,
    negative_data_rejection,
    positive_data_acceptance,
]
MAX_TOKENS = 4
VOCAB = ENGINE.vocab_size
schema = schemathesis.openapi.from_path(DOCUMENT)


@schemathesis.deserializer(sse.CONTENT_TYPE)
def event_stream(ctx: schemathesis.DeserializationContext, response: Any) -> list[Any]:
    """The decoded stream, as the only item of a list.

    The contract's ``text/event-stream`` schema (``CompletionEventStream``) describes the whole
    stream as the array of its ``data`` payloads (JSON chunks, then the string ``[DONE]``).
    Schemathesis 4 reads an event-stream schema the OpenAPI 3.2 way, as the schema of *each*
    item the deserializer returns; returning the decoded stream as a single item makes it
    validate the whole stream against the contract's schema, as intended.
    """
    return [_payloads(response.content)]


def _payloads(content: bytes) -> list[Any]:
    text = content.decode("utf-8")
    if not text.endswith("\n\n"):
        raise ValueError("the stream does not end with a blank line")
    payloads: list[Any] = []
    for event in text[:-2].split("\n\n"):
        lines = event.split("\n")
        if not all(line.startswith("data: ") for line in lines) or len(lines) != 1:
            raise ValueError(f"not a single-line data event: {event!r}")
        data = lines[0][len("data: "):]
        payloads.append(data if data == sse.DONE else json.loads(data))
    return payloads


def _ids(value: Any, limit: int = 32) -> Any:
    if isinstance(value, list):
        return [_ids(v, limit) for v in value[:limit]]
    if isinstance(value, int) and not isinstance(value, bool):
        return value % VOCAB
    return value


def servable(body: Any, path: str) -> Any:
    """A valid body made small and servable (ids in the vocabulary, cross-field rules met)."""
    if not isinstance(body, dict):
        return body
    body = integral_numbers(body)
    body["model"] = MODEL
    friendli = path.startswith("/dedicated")
    for name in ("n",):
        if isinstance(body.get(name), int):
            body[name] = min(body[name], 2)
    if isinstance(body.get("best_of"), int):
        body["best_of"] = min(body["best_of"], 3)
    if isinstance(body.get("logprobs"), int):
        body["logprobs"] = min(body["logprobs"], 5)
    prompt = body.get("prompt")
    if isinstance(prompt, str):
        body["prompt"] = prompt[:200]
    elif isinstance(prompt, list):
        body["prompt"] = [p[:200] if isinstance(p, str) else _ids(p) for p in prompt[:3]]
        if prompt and isinstance(prompt[0], int):
            body["prompt"] = _ids(prompt)
    for name in ("tokens", "eos_token", "forced_output_tokens"):
        if isinstance(body.get(name), list):
            body[name] = _ids(body[name], 8 if name == "forced_output_tokens" else 32)
    for name in ("bad_word_tokens", "stop_tokens"):
        if isinstance(body.get(name), list):
            body[name] = [
                {**s, "tokens": _ids(s["tokens"])} if isinstance(s, dict) else s
                for s in body[name][:4]
            ]
    if isinstance(body.get("logit_bias"), dict):
        body["logit_bias"] = {str(int(k) % VOCAB): v for k, v in body["logit_bias"].items()}
    for name in ("embedding_to_replace", "token_index_to_replace", "encoder_no_repeat_ngram",
                 "encoder_repetition_penalty"):
        body.pop(name, None)
    if isinstance(body.get("max_tokens"), int) or not friendli:
        body["max_tokens"] = min(body.get("max_tokens") or MAX_TOKENS, MAX_TOKENS)
    if friendli and isinstance(body.get("max_total_tokens"), int):
        body.pop("max_tokens", None)
        body["max_total_tokens"] = _prompt_tokens(body) + MAX_TOKENS
    elif friendli:
        body["max_tokens"] = min(body.get("max_tokens") or MAX_TOKENS, MAX_TOKENS)
    _meet_engine_constraints(body)
    return _meet_cross_field_rules(body, "friendli" if friendli else "openai")


ENFORCEABLE: dict[object, dict[str, Any]] = {
    "json_schema": {"type": "json_schema", "json_schema": {"schema": {"type": "object"}}},
    "regex": {"type": "regex", "schema": "[a-z]{1,8}"},
}


def _meet_engine_constraints(body: dict[str, Any]) -> None:
    """Repair what the engine rightly rejects but a schema cannot state.

    Forced output tokens must be a valid start of the JSON object ``response_format`` asks
    for (the engine answers 422 otherwise, a correct rejection of a valid-looking body), and
    its schema or pattern one the engine can enforce.
    """
    if isinstance(body.get("response_format"), dict):
        # a schema-valid regex or JSON Schema may be one no engine can enforce (unclosed
        # brackets, lookarounds): the engine's 422 for those is right (tests of its own)
        kind = body["response_format"].get("type")
        body["response_format"] = ENFORCEABLE.get(kind, body["response_format"])
    if body.get("forced_output_tokens") and isinstance(body.get("response_format"), dict):
        body.pop("response_format")


def _prompt_tokens(body: dict[str, Any]) -> int:
    if isinstance(body.get("tokens"), list):
        return len(body["tokens"])
    prompt = body.get("prompt")
    prompts = prompt if isinstance(prompt, list) else [prompt]
    return max(len(ENGINE.tokenizer.encode(p)) for p in prompts if isinstance(p, str))


def _meet_cross_field_rules(body: dict[str, Any], profile_name: str) -> dict[str, Any]:
    for _ in range(10):
        violations = spec.cross_field_violations(body, profile_name)
        if not violations:
            return body
        rule = violations[0]
        if rule.rule_id == "seed-list-matches-n":
            body["seed"] = [1] * (body.get("n") or 1)
        elif rule.rule_id == "max-tokens-xor-max-total-tokens":
            body.pop("max_total_tokens")
        else:
            body.pop(rule.param, None)
    return body


@pytest.fixture(scope="module")
def live() -> Any:
    with LiveServer() as server:
        yield server


def _servable_if_valid(case: Any) -> None:
    """Repair only bodies the contract accepts, so a negative case is never made valid."""
    body = case.body
    path = case.operation.path
    if not isinstance(body, dict) or case.operation.method.upper() != "POST":
        return
    name = "FriendliCompletionRequest" if path.startswith("/dedicated") else "CompletionRequest"
    if spec.component_validator(name).is_valid(body):
        case.body = servable(body, path)


def _run(case: Any, live: LiveServer) -> None:
    _servable_if_valid(case)
    case.call_and_validate(base_url=live.url, checks=CHECKS, timeout=30)


@schema.parametrize()
@settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
def test_contract(case: Any, live: LiveServer) -> None:
    _run(case, live)


slow_schema = schemathesis.openapi.from_path(DOCUMENT)


@pytest.mark.nightly  # .ci/run's own fuzz of the mock runs schemathesis' checks on it too
@slow_schema.parametrize()
@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
def test_contract_long(case: Any, live: LiveServer) -> None:
    _run(case, live)
