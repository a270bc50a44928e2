"""A profile's own answers are what ``conformance fuzz`` checks a response against (FUZZ-002).

vLLM's error envelope has an integer ``code`` (its ``ErrorInfo``: ``"code": 400``), in a body and
in the error event of a stream; its profile (and ``openai-compatible``, after it) accepts that,
so the fuzzer's document gives their completions operation their own schemas, not OpenAI's.
"""

from __future__ import annotations

import json

import pytest
import schemathesis
from fuzz_support import chunk, response, sse

import conformance.fuzz  # noqa: F401  (registers the event-stream deserializer)
import spec

VLLM_ERROR = {"error": {"message": "max_tokens must be at least 1, got 0.",
                        "type": "BadRequestError", "param": None, "code": 400}}


def _validate(profile_name: str, answer: schemathesis.Response) -> None:
    schema = schemathesis.openapi.from_dict(spec.profile_document(profile_name))
    schema["/v1/completions"]["POST"].validate_response(answer)


@pytest.mark.parametrize("profile_name", ["vllm", "openai-compatible"])
def test_vllms_integer_error_code_conforms(profile_name: str) -> None:
    body = {"model": "m", "prompt": "p", "max_tokens": 0}
    _validate(profile_name, response(body, json.dumps(VLLM_ERROR).encode(), status=400))
    stream = sse(chunk(0, "a"), VLLM_ERROR)
    _validate(profile_name, response({**body, "stream": True}, stream,
                                content_type="text/event-stream"))


def test_openai_keeps_its_string_code() -> None:
    body = {"model": "m", "prompt": "p", "max_tokens": 0}
    with pytest.raises(AssertionError):
        _validate("openai", response(body, json.dumps(VLLM_ERROR).encode(), status=400))
    with pytest.raises(AssertionError):
        _validate("openai", response({**body, "stream": True}, sse(chunk(0, "a"), VLLM_ERROR),
                                     content_type="text/event-stream"))
