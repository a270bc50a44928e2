"""What vLLM taught us: its valid-but-unusual answers pass, on every profile that allows them.

vLLM 0.32 (``tests/fixtures/lab/vllm-*.json``) answers in ways no rule may flag where the
contract allows them: extra fields in every choice and at the top (``stop_reason``,
``token_ids``, ``prompt_logprobs``, ``prompt_token_ids``, ``service_tier``,
``kv_transfer_params``, ``metrics``; the response schemas are open), no ``usage`` key on the
chunks before the usage chunk (profiles whose ``stream.usage_key_on_chunks`` allows absence),
the choices of ``n > 1`` in their own order, and several tokens in one chunk (vLLM holds text
back while it may be the start of a stop string, then sends it with all its tokens' logprobs).

A loopback front (``rewriting_front``) rewrites the mock's answers into each form and the
whole catalog runs through it: nothing may fail. Where a profile forbids the form (OpenAI's
``usage: null`` on every chunk), exactly the rule that says so fails.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from harness_support import not_passing, settings_for
from rewriting_front import Answer, Rewrite, front

from conformance.rules import CATALOG
from conformance.run.runner import execute
from conformance.target.embedded import EmbeddedMock

Events = list[Any]
"""The decoded ``data`` of a stream's events (``[DONE]`` as the string)."""

CHOICE_EXTRAS = {"stop_reason": None, "token_ids": None, "prompt_logprobs": None,
                 "prompt_token_ids": None}
TOP_EXTRAS = {"service_tier": None, "kv_transfer_params": None, "metrics": None}


def with_extras(body: Any) -> Any:
    """vLLM's extra fields, null where the answer has none (a ``stop_reason`` the vllm mock
    gave stays: vLLM's own is never nulled)."""
    if isinstance(body, dict) and isinstance(body.get("choices"), list):
        body = {**TOP_EXTRAS, **body}
        body["choices"] = [{**CHOICE_EXTRAS, **c} if isinstance(c, dict) else c
                           for c in body["choices"]]
    return body


def extra_fields(events: Events) -> Events:
    return [with_extras(e) for e in events]


def usage_key_absent(events: Events) -> Events:
    return [{k: v for k, v in e.items() if k != "usage"}
            if isinstance(e, dict) and e.get("choices") and e.get("usage") is None else e
            for e in events]


def _index(event: Any) -> int | None:
    if isinstance(event, dict) and isinstance(event.get("choices"), list) and event["choices"]:
        first = event["choices"][0]
        return first.get("index") if isinstance(first, dict) else None
    return None


def choices_last_first(events: Events) -> Events:
    """Every chunk of the highest choice index first: the order of ``n`` choices is free."""
    chunks = [e for e in events if _index(e) is not None]
    rest = [e for e in events if _index(e) is None]
    return sorted(chunks, key=lambda e: -(_index(e) or 0)) + rest


def _mergeable(a: Any, b: Any) -> bool:
    if _index(a) is None or _index(a) != _index(b):
        return False
    ca, cb = a["choices"], b["choices"]
    return (len(ca) == len(cb) == 1 and ca[0].get("finish_reason") is None
            and cb[0].get("finish_reason") is None)


def _merged(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    first, second = a["choices"][0], b["choices"][0]
    choice = {**first, "text": first["text"] + second["text"]}
    if isinstance(first.get("logprobs"), dict) and isinstance(second.get("logprobs"), dict):
        choice["logprobs"] = {key: list(first["logprobs"].get(key) or [])
                              + list(second["logprobs"].get(key) or [])
                              for key in first["logprobs"]}
    return {**a, "choices": [choice]}


def tokens_held_back(events: Events) -> Events:
    """Two consecutive chunks of a choice sent as one, their texts and logprobs joined."""
    out: Events = []
    for event in events:
        if out and _mergeable(out[-1], event) and not out[-1].get("_merged"):
            out[-1] = {**_merged(out[-1], event), "_merged": True}
        else:
            out.append(event)
    return [{k: v for k, v in e.items() if k != "_merged"} if isinstance(e, dict) else e
            for e in out]


REWRITES: dict[str, Callable[[Events], Events]] = {
    "extra-fields": extra_fields,
    "usage-key-absent": usage_key_absent,
    "choices-last-first": choices_last_first,
    "tokens-held-back": tokens_held_back,
}


def rewrite_stream(payload: bytes, rewrite: Callable[[Events], Events]) -> bytes:
    events: Events = []
    for block in payload.decode("utf-8").split("\n\n"):
        if block.startswith("data: "):
            data = block[len("data: "):]
            events.append(data if data == "[DONE]" else json.loads(data))
    out = []
    for event in rewrite(events):
        data = event if isinstance(event, str) else json.dumps(event, ensure_ascii=False,
                                                                separators=(",", ":"))
        out.append(f"data: {data}\n\n")
    return "".join(out).encode("utf-8")


def vllm_rendering(name: str) -> Rewrite:
    """The answers rendered as vLLM renders them in the way ``name`` says."""
    rewrite = REWRITES[name]

    def render(answer: Answer) -> Answer:
        if answer.media.startswith("text/event-stream"):
            answer.body = rewrite_stream(answer.body, rewrite)
        elif answer.media.startswith("application/json") and name == "extra-fields":
            answer.body = json.dumps(with_extras(json.loads(answer.body))).encode("utf-8")
        return answer

    return render


SIGNS: dict[str, Callable[[bytes], bool]] = {
    "extra-fields": lambda body: b'"stop_reason":null' in body,
    "usage-key-absent": lambda body: True,  # shown by USAGE-011 under openai, below
    "choices-last-first": lambda body: -1 < body.find(b'"index":1') < body.find(b'"index":0'),
    "tokens-held-back": lambda body: re.search(rb'"tokens":\["[^"]*","', body) is not None,
}
"""Bytes that show the rewrite reached the harness in at least one stream."""


def judged(mock: EmbeddedMock, name: str, profile_name: str) -> dict[str, str]:
    async def main() -> dict[str, str]:
        async with front(mock.openai_url.rsplit("/v1", 1)[0], vllm_rendering(name)) as url:
            settings = settings_for(url + "/v1", profile_name)
            result = await execute(settings, CATALOG.select(profile=settings.profile))
        streams = [e.body for e in result.exchanges.values() if e.is_sse and e.status == 200]
        assert any(SIGNS[name](body) for body in streams), f"{name} changed no stream"
        return not_passing(result)

    return asyncio.run(main())


@pytest.mark.parametrize("profile_name", ["openai", "openai-compatible", "vllm"])
@pytest.mark.parametrize("name", ["extra-fields", "choices-last-first", "tokens-held-back"])
def test_valid_vllm_renderings_are_never_flagged(
        served: Callable[[str], EmbeddedMock], name: str, profile_name: str) -> None:
    assert judged(served(profile_name), name, profile_name) == {}


@pytest.mark.parametrize("profile_name", ["openai-compatible", "vllm"])
def test_no_usage_key_before_the_usage_chunk_is_valid_where_the_profile_allows_it(
        served: Callable[[str], EmbeddedMock], profile_name: str) -> None:
    assert judged(served(profile_name), "usage-key-absent", profile_name) == {}


def test_no_usage_key_fails_only_the_rule_of_usage_null_under_openai(mock: EmbeddedMock) -> None:
    assert set(judged(mock, "usage-key-absent", "openai")) == {"USAGE-011"}


def test_the_rewrites_change_what_they_say() -> None:
    def chunk(index: int, text: str, finish: str | None = None) -> dict[str, Any]:
        return {"id": "c", "usage": None, "choices": [
            {"index": index, "text": text, "finish_reason": finish,
             "logprobs": {"tokens": [text], "token_logprobs": [-1.0]}}]}

    events: Events = [chunk(0, "a"), chunk(1, "b"), chunk(0, "c", "stop"), chunk(1, "d", "stop"),
                      "[DONE]"]
    assert [_index(e) for e in choices_last_first(events)[:2]] == [1, 1]
    assert "usage" not in usage_key_absent(events)[0]
    assert extra_fields(events)[0]["choices"][0]["stop_reason"] is None
    merged = tokens_held_back([chunk(0, "a"), chunk(0, "b"), chunk(0, "", "stop"), "[DONE]"])
    assert merged[0]["choices"][0]["text"] == "ab" and len(merged) == 3
    assert merged[0]["choices"][0]["logprobs"]["tokens"] == ["a", "b"]
