"""Gateways judged fairly: what a gateway adds on the way through is never flagged.

The Portkey gateway and LiteLLM's proxy relay a completions server's answers with changes the
contract allows: headers of their own (``x-portkey-trace-id``, ``x-litellm-call-id``...), the
provider's name before an error's message (``"openai error: ..."``), fields of their own in an
error body (``"provider": "openai"``), and JSON parsed and written again by JavaScript, where
a float with no fraction loses its ``.0`` (a logprob ``0.0`` becomes ``0``). A loopback front
(``rewriting_front``) makes each change to the mock's answers (and re-serialises the requests
it forwards, as such a gateway does) and the whole catalog runs through it: nothing may fail,
on any profile. A gateway that puts a model of its own in a body that named none is not
fair: exactly ERRORS-010 fails it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import pytest
from harness_support import MODEL, not_passing, settings_for
from rewriting_front import Answer, Rewrite, as_sent, front

import spec
from conformance.model import RunResult
from conformance.rules import CATALOG
from conformance.run.runner import execute
from conformance.target.embedded import EmbeddedMock

GATEWAY_HEADERS = {
    "x-portkey-trace-id": "5d1c2b8e-2f0e-4f57-9c7a-3f1f1f0e9a11",
    "x-portkey-provider": "openai",
    "x-portkey-retry-attempt-count": "0",
    "x-portkey-cache-status": "DISABLED",
    "x-litellm-call-id": "7b0f5e1c-6a8d-4c1e-9b1e-2d7f0c3a4b5d",
    "x-litellm-model-id": "3f2a1b",
    "x-litellm-response-cost": "0.0",
    "x-litellm-version": "1.108.7",
}
PROVIDER = "openai"


def js_numbers(value: Any) -> Any:
    """``value`` as JavaScript writes it back: a float with no fraction is an integer."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: js_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [js_numbers(v) for v in value]
    return value


def rewritten_json(data: bytes) -> bytes:
    return json.dumps(js_numbers(json.loads(data)), separators=(",", ":"),
                      ensure_ascii=False).encode("utf-8")


def reserialised(answer: Answer) -> Answer:
    if answer.media.startswith("application/json"):
        answer.body = rewritten_json(answer.body)
    elif answer.media.startswith("text/event-stream"):
        blocks = answer.body.decode("utf-8").split("\n\n")
        answer.body = "\n\n".join(
            f"data: {rewritten_json(block[6:].encode()).decode()}"
            if block.startswith("data: {") else block for block in blocks).encode("utf-8")
    return answer


def headers_added(answer: Answer) -> Answer:
    answer.headers.update(GATEWAY_HEADERS)
    return answer


def _error_body(answer: Answer) -> dict[str, Any] | None:
    if answer.status < 400 or not answer.media.startswith("application/json"):
        return None
    body = json.loads(answer.body)
    return body if isinstance(body, dict) and isinstance(body.get("error"), dict) else None


def message_prefixed(answer: Answer) -> Answer:
    body = _error_body(answer)
    if body is not None:
        body["error"]["message"] = f"{PROVIDER} error: {body['error']['message']}"
        answer.body = json.dumps(body).encode("utf-8")
    return answer


def provider_added(answer: Answer) -> Answer:
    body = _error_body(answer)
    if body is not None:
        body["provider"] = PROVIDER
        body["error"]["provider"] = PROVIDER
        answer.body = json.dumps(body).encode("utf-8")
    return answer


def everything(answer: Answer) -> Answer:
    for rewrite in (reserialised, headers_added, message_prefixed, provider_added):
        answer = rewrite(answer)
    return answer


REWRITES: dict[str, Rewrite] = {
    "headers-added": headers_added,
    "message-prefixed": message_prefixed,
    "provider-added": provider_added,
    "numbers-reserialised": reserialised,
    "all-at-once": everything,
}


def forwarded(body: bytes) -> bytes:
    """The request as a JavaScript gateway forwards it (``temperature: 0.0`` as ``0``); a
    body that is not JSON goes up as it came."""
    try:
        return rewritten_json(body)
    except ValueError:
        return body


def judged(mock: EmbeddedMock, profile_name: str, rewrite: Rewrite,
           forward: Callable[[bytes], bytes] = as_sent) -> RunResult:
    target = urlsplit(mock.url_for(spec.get_profile(profile_name)))

    async def main() -> RunResult:
        async with front(f"{target.scheme}://{target.netloc}", rewrite, forward=forward) as url:
            settings = settings_for(url + target.path, profile_name)
            return await execute(settings, CATALOG.select(profile=settings.profile))

    return asyncio.run(main())


def bodies(result: RunResult, *, errors: bool) -> list[bytes]:
    return [e.body for e in result.exchanges.values()
            if e.status is not None and (e.status >= 400) == errors]


SIGNS: dict[str, Callable[[RunResult], bool]] = {
    "headers-added": lambda result: all(
        e.header("x-portkey-trace-id") for e in result.exchanges.values() if e.status),
    "message-prefixed": lambda result: any(
        b'"message": "openai error: ' in body for body in bodies(result, errors=True)),
    "provider-added": lambda result: any(
        b'"provider": "openai"' in body for body in bodies(result, errors=True)),
    "numbers-reserialised": lambda result: any(
        b'"logprob":0,' in body or b'"token_logprobs":[0' in body or b",0]" in body
        for body in bodies(result, errors=False)),
}
"""What shows each rewrite reached the harness."""
UNSEEN = {("numbers-reserialised", "friendli")}
"""Rewrites with nothing to change on a profile: the mock's FriendliAI answers hold no float
without a fraction (on OpenAI's wire the logit-bias probe's forced token has logprob 0.0)."""
PROFILES = ["openai", "openai-compatible", "vllm", "friendli"]


@pytest.mark.parametrize("profile_name", PROFILES)
@pytest.mark.parametrize("name", sorted(REWRITES))
def test_what_a_gateway_adds_is_never_flagged(
        served: Callable[[str], EmbeddedMock], name: str, profile_name: str) -> None:
    if (name, profile_name) in UNSEEN:
        pytest.skip(f"{name} has nothing to change in the mock's {profile_name} answers")
    forward = forwarded if name in ("numbers-reserialised", "all-at-once") else as_sent
    result = judged(served(profile_name), profile_name, REWRITES[name], forward)
    for sign, shown in SIGNS.items():
        if name in (sign, "all-at-once") and (sign, profile_name) not in UNSEEN:
            assert shown(result), f"{sign} changed nothing the harness saw"
    assert not_passing(result) == {}


def _unnamed(body: bytes) -> dict[str, Any] | None:
    """A JSON request body that names no model, else None."""
    try:
        sent = json.loads(body)
    except ValueError:
        return None
    return sent if isinstance(sent, dict) and "model" not in sent else None


def substituting(answer: Answer) -> Answer:
    """A gateway that serves a body without model by a model of its own, as Portkey does: the
    answer names the gateway's model and is its text (another model writes other words; the
    mock, which has one, stands in for the upstream's answer, relabelled and rewritten)."""
    if _unnamed(answer.request) is not None and answer.status == 200:
        body = json.loads(answer.body)
        body["model"] = "text-davinci-003"
        for choice in body.get("choices", []):
            choice["text"] = " Davinci writes this instead."
        answer.body = json.dumps(body).encode("utf-8")
    return answer


def model_put_in(body: bytes) -> bytes:
    sent = _unnamed(body)
    return body if sent is None else json.dumps({**sent, "model": MODEL}).encode("utf-8")


@pytest.mark.parametrize("profile_name", ["openai", "openai-compatible", "vllm"])
def test_a_model_put_in_by_the_gateway_fails_only_errors_010(
        served: Callable[[str], EmbeddedMock], profile_name: str) -> None:
    result = judged(served(profile_name), profile_name, substituting, model_put_in)
    failing = not_passing(result)
    assert set(failing) == {"ERRORS-010"}
    if profile_name != "openai":  # there a 200 fails whoever answers it
        assert "'text-davinci-003'" in failing["ERRORS-010"]
