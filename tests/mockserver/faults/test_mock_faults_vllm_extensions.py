"""Faults in vLLM's extensions, on ``mockserver --profile vllm`` (the built-in ``/v1`` refuses
vLLM's fields): each ignores one field, or bends one response field, and nothing else."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from mock_fault_support import SCENARIOS, both, module_scenarios, scenario, send, stream_text
from mock_live import MODEL, LiveServer

from mockserver import MockConfig


def greedy(prompt: str, **fields: Any) -> dict[str, Any]:
    return {"model": MODEL, "prompt": prompt, "max_tokens": 16, "temperature": 0, **fields}


def first(reply: Any) -> dict[str, Any]:
    return reply.json()["choices"][0]


@scenario("ignore-eos-ignored")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "ignore-eos-ignored", greedy("It was going to be a fine",
                                                            ignore_eos=True))
    assert clean.json()["usage"]["completion_tokens"] == 16
    assert faulty.json()["usage"]["completion_tokens"] < 16
    assert first(faulty)["finish_reason"] == "stop"


@scenario("stop-token-ids-ignored")
def _(live: LiveServer) -> None:
    token = first(send(live, None, greedy("Example:", logprobs=0,
                                          return_tokens_as_token_ids=True)))
    stop = int(token["logprobs"]["tokens"][2].split(":")[1])
    clean, faulty = both(live, "stop-token-ids-ignored", greedy("Example:",
                                                                stop_token_ids=[stop]))
    assert (first(clean)["finish_reason"], first(clean)["stop_reason"]) == ("stop", stop)
    assert first(faulty)["text"].startswith(first(clean)["text"])
    assert (first(faulty)["finish_reason"], first(faulty)["stop_reason"]) == ("length", None)


@scenario("stop-string-left-out")
def _(live: LiveServer) -> None:
    text = first(send(live, None, greedy("Example:")))["text"]
    stop = text[8:11]
    payload = greedy("Example:", stop=[stop], include_stop_str_in_output=True)
    clean, faulty = both(live, "stop-string-left-out", payload)
    assert first(clean)["text"] == first(faulty)["text"] + stop
    assert first(faulty)["stop_reason"] == stop
    streamed = send(live, "stop-string-left-out", {**payload, "stream": True})
    assert stream_text(streamed) == first(faulty)["text"]


@scenario("tokens-named-by-text")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "tokens-named-by-text", greedy("Hi", logprobs=1,
                                                              return_tokens_as_token_ids=True))
    assert all(t.startswith("token_id:") for t in first(clean)["logprobs"]["tokens"])
    assert not any(t.startswith("token_id:") for t in first(faulty)["logprobs"]["tokens"])
    assert first(clean)["text"] == first(faulty)["text"]


@scenario("stop-reason-null")
def _(live: LiveServer) -> None:
    text = first(send(live, None, greedy("Example:")))["text"]
    payload = greedy("Example:", stop=[text[8:11]], include_stop_str_in_output=False)
    clean, faulty = both(live, "stop-reason-null", payload)
    assert first(clean)["stop_reason"] == text[8:11]
    assert first(faulty)["stop_reason"] is None
    assert first(clean)["text"] == first(faulty)["text"]


@scenario("prompt-logprobs-keyed-by-text")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "prompt-logprobs-keyed-by-text",
                         greedy("It was going to be", max_tokens=1, prompt_logprobs=1))
    ranked, texts = first(clean)["prompt_logprobs"], first(faulty)["prompt_logprobs"]
    assert len(ranked) == len(texts) and all(k.isdigit() for k in ranked[1])
    assert list(texts[1]) == [value["decoded_token"] for value in ranked[1].values()]


@scenario("prompt-logprobs-last-missing")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "prompt-logprobs-last-missing",
                         greedy("It was going to be", max_tokens=1, prompt_logprobs=1))
    assert first(faulty)["prompt_logprobs"] == first(clean)["prompt_logprobs"][:-1]
    assert len(first(clean)["prompt_logprobs"]) == clean.json()["usage"]["prompt_tokens"]


@pytest.fixture(scope="module")
def vllm_server() -> Iterator[LiveServer]:
    """``mockserver --profile vllm``: vLLM's fields on ``/v1``."""
    with LiveServer(MockConfig(profile_refs=("vllm",))) as live:
        yield live


@pytest.mark.parametrize("name", module_scenarios(__name__))
def test_fault(vllm_server: LiveServer, name: str) -> None:
    SCENARIOS[name](vllm_server)
