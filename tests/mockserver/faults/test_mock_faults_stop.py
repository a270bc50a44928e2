"""Faults of stop strings: text past a stop, stops leaked into the text or the stream."""

from __future__ import annotations

import pytest
from mock_fault_support import (
    SCENARIOS,
    body,
    module_scenarios,
    scenario,
    send,
    stop_case,
    stream_text,
)
from mock_live import LiveServer

# -- stop strings -------------------------------------------------------------------------


@scenario("stop-leak")
def _(live: LiveServer) -> None:
    payload = stop_case(live)
    stop = payload["stop"][0]
    assert send(live, "stop-leak", payload).json()["choices"][0]["text"].endswith(stop)
    assert stream_text(send(live, "stop-leak", {**payload, "stream": True})).endswith(stop)


@scenario("stop-leak-stream")
def _(live: LiveServer) -> None:
    payload = stop_case(live)
    stop = payload["stop"][0]
    whole = send(live, "stop-leak-stream", payload).json()["choices"][0]["text"]
    assert stop not in whole
    assert stream_text(send(live, "stop-leak-stream", {**payload, "stream": True})) == whole + stop


@scenario("prompt-leak-stream")
def _(live: LiveServer) -> None:
    payload = body(prompt=[464, 1361], temperature=0)
    whole = send(live, "prompt-leak-stream", payload).json()["choices"][0]["text"]
    assert stream_text(send(live, None, {**payload, "stream": True})) == whole
    echoed = send(live, None, {**payload, "echo": True}).json()["choices"][0]["text"]
    leaked = stream_text(send(live, "prompt-leak-stream", {**payload, "stream": True}))
    assert leaked == echoed != whole


@scenario("stop-ignored")
def _(live: LiveServer) -> None:
    payload = stop_case(live)
    choice = send(live, "stop-ignored", payload).json()["choices"][0]
    assert payload["stop"][0] in choice["text"] and choice["finish_reason"] == "length"


@pytest.mark.parametrize("name", module_scenarios(__name__))
def test_fault(server: LiveServer, name: str) -> None:
    SCENARIOS[name](server)
