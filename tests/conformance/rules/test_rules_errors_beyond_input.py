"""ERRORS-010 (a body without model) and ERRORS-011 (a server's own 5xx) over hand-built
exchanges: the answers real servers and gateways give that the mock's faults do not reach."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from harness_support import MODEL, json_exchange, rule

import spec
from conformance.probes import ProbeOutcome
from conformance.run.runner import evaluate
from conformance.run.settings import Settings
from conformance.transport import Exchange

UNNAMED = {"prompt": "A list is", "max_tokens": 4, "temperature": 0}
NAMED = {"model": MODEL, **UNNAMED}


def completion(model: str = MODEL, text: str = "ab") -> dict[str, Any]:
    return {"id": "c", "object": "text_completion", "created": 1, "model": model,
            "choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": "length"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}}


def error(message: str, param: str | None = None, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": param,
                      "code": code}}


def judged(rule_id: str, profile_name: str, missing: Exchange,
           greedy: Exchange | None = None) -> tuple[str, str]:
    chosen = spec.get_profile(profile_name)
    settings = Settings("http://x.test/v1", chosen, MODEL, chosen.features)
    outcomes = {
        "greedy": ProbeOutcome("greedy", exchanges={"ns": greedy or json_exchange(completion())},
                               requests={"ns": NAMED}),
        "model-missing": ProbeOutcome("model-missing", exchanges={"missing": missing},
                                      requests={"missing": UNNAMED}, invalid={"missing"}),
    }
    result = evaluate(rule(rule_id), settings, outcomes, {})
    return result.verdict.value, result.message


def answer(body: object, status: int, content_type: str = "application/json") -> Exchange:
    return json_exchange(body, status=status, request_body=UNNAMED, content_type=content_type)


@pytest.mark.parametrize(("profile_name", "status", "body"), [
    ("openai", 400, error("you must provide a model parameter")),  # OpenAI's own, param null
    ("openai", 400, error("Missing required parameter: 'model'.", "model")),
    ("openai-compatible", 422, error("Field required", "model")),
    ("vllm", 400, error("model: Field required")),  # a server may refuse what it may default
    ("friendli", 422, {"detail": [{"loc": ["body", "model"], "msg": "Field required",
                                   "type": "missing"}]}),
])
def test_a_refusal_naming_model_passes(profile_name: str, status: int, body: object) -> None:
    assert judged("ERRORS-010", profile_name, answer(body, status))[0] == "PASS"


@pytest.mark.parametrize(("profile_name", "status", "body", "said"), [
    ("openai", 404, error("The model `text-davinci-003` does not exist", "model",
                          "model_not_found"), "404"),
    ("openai-compatible", 404, error("openai error: The model `text-davinci-003` does not "
                                     "exist"), "404"),
    ("openai", 422, error("Field required", "model"), "HTTP 422"),
    ("openai", 400, error("Invalid request"), "does not name model"),
    ("openai", 500, error("upstream failed"), "HTTP 500"),
    ("openai", 200, completion(), "requires model"),
    ("friendli", 200, completion(), "requires model"),
])
def test_a_substituted_or_silent_answer_fails(profile_name: str, status: int, body: object,
                                             said: str) -> None:
    verdict, message = judged("ERRORS-010", profile_name, answer(body, status))
    assert verdict == "FAIL" and said in message


def test_where_the_model_may_be_defaulted_only_the_model_under_test_may_answer() -> None:
    assert judged("ERRORS-010", "vllm", answer(completion(), 200))[0] == "PASS"
    other = completion("text-davinci-003", text=" other words")
    verdict, message = judged("ERRORS-010", "vllm", answer(other, 200))
    assert verdict == "FAIL" and "'text-davinci-003'" in message
    # the model under test by the text it writes, whatever its name (llama-cpp-python names
    # its model file's path when the body names no model)
    path = completion("/srv/models/tiny.gguf", text="a")
    assert judged("ERRORS-010", "openai-compatible", answer(path, 200))[0] == "PASS"
    # a server reporting another spelling of its own model (the greedy answer's) passes
    alias = json_exchange(completion("/models/tiny"), request_body=NAMED)
    assert judged("ERRORS-010", "openai-compatible", answer(completion("/models/tiny"), 200),
                  alias)[0] == "PASS"


def test_a_replay_without_the_request_skips_saying_so() -> None:
    unrecorded = answer(error("The recording has no exchange for POST /v1/completions.",
                              "model", "no_recorded_exchange"), 404)
    verdict, message = judged("ERRORS-010", "vllm", unrecorded)
    assert verdict == "SKIP" and "not in the replayed recording" in message


def test_a_refused_request_skips() -> None:
    assert judged("ERRORS-010", "openai", answer(error("slow down"), 429))[0] == "SKIP"


def test_a_server_error_in_the_envelope_passes_and_any_other_body_is_non_strict() -> None:
    enveloped = answer({"error": {"message": "upstream down", "type": "server_error",
                                  "param": None, "code": None}}, 502)
    assert judged("ERRORS-011", "openai", enveloped)[0] == "PASS"
    vllm_code = answer({"error": {"message": "boom", "type": "InternalServerError",
                                  "param": None, "code": 500}}, 500)
    assert judged("ERRORS-011", "vllm", vllm_code)[0] == "PASS"
    portkey = answer({"html-message": "connect ECONNREFUSED 127.0.0.1:8000"}, 500)
    verdict, message = judged("ERRORS-011", "openai", portkey)
    assert verdict == "NON_STRICT" and "not the error envelope" in message
    page = dataclasses.replace(json_exchange({}, status=502, content_type="text/html"),
                               body=b"<html>502 Bad Gateway</html>")
    verdict, message = judged("ERRORS-011", "openai", page)
    assert verdict == "NON_STRICT" and "not JSON" in message


def test_without_a_server_error_the_run_passes() -> None:
    assert judged("ERRORS-011", "openai", answer(error("no model", "model"), 400))[0] == "PASS"


def test_a_server_failing_every_request_is_not_blamed_on_the_missing_model() -> None:
    down = json_exchange(error("upstream connect error"), status=500, request_body=NAMED)
    verdict, message = judged("ERRORS-010", "openai", answer(error("no route"), 404), down)
    assert verdict == "SKIP" and "judged by ERRORS-008" in message
