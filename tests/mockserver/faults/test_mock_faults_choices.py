"""Faults of choices: ``finish_reason`` values, choice indices and their order."""

from __future__ import annotations

import pytest
from mock_fault_support import (
    SCENARIOS,
    body,
    both,
    chunk_list,
    module_scenarios,
    scenario,
    send,
    stop_case,
    streamed,
)
from mock_live import LiveServer

# -- finish_reason and indices ------------------------------------------------------------


@scenario("finish-reason-nonstandard")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "finish-reason-nonstandard", stop_case(live))
    assert clean.json()["choices"][0]["finish_reason"] == "stop"
    assert faulty.json()["choices"][0]["finish_reason"] == "eos"


@scenario("finish-reason-empty-string")
def _(live: LiveServer) -> None:
    chunks = chunk_list(send(live, "finish-reason-empty-string", streamed()))
    assert chunks[0]["choices"][0]["finish_reason"] == ""


@scenario("length-reported-as-stop")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "length-reported-as-stop", body(max_tokens=2))
    assert clean.json()["choices"][0]["finish_reason"] == "length"
    assert faulty.json()["choices"][0]["finish_reason"] == "stop"


@scenario("index-always-zero")
def _(live: LiveServer) -> None:
    assert [c["index"] for c in send(live, "index-always-zero", body(n=2)).json()["choices"]] == \
        [0, 0]
    chunks = chunk_list(send(live, "index-always-zero", streamed(n=2)))
    assert {ch["index"] for c in chunks for ch in c["choices"]} == {0}


@scenario("choice-missing")
def _(live: LiveServer) -> None:
    assert [c["index"] for c in send(live, "choice-missing", body(n=2)).json()["choices"]] == [0]
    chunks = chunk_list(send(live, "choice-missing", streamed(n=2)))
    assert {ch["index"] for c in chunks for ch in c["choices"]} == {0}


@scenario("choices-unordered")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "choices-unordered", body(n=3))
    assert [c["index"] for c in clean.json()["choices"]] == [0, 1, 2]
    assert [c["index"] for c in faulty.json()["choices"]] == [2, 1, 0]


@scenario("prompts-swapped")
def _(live: LiveServer) -> None:
    payload = body(prompt=["Alpha", "Beta"], echo=True, max_tokens=1, n=2)
    choices = send(live, "prompts-swapped", payload).json()["choices"]
    assert [c["index"] for c in choices] == [0, 1, 2, 3]
    assert choices[0]["text"].startswith("Beta") and choices[2]["text"].startswith("Alpha")


@pytest.mark.parametrize("name", module_scenarios(__name__))
def test_fault(server: LiveServer, name: str) -> None:
    SCENARIOS[name](server)
