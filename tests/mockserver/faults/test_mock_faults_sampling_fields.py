"""Faults that ignore a sampling field: penalties, top_k, banned words, forced tokens."""

from __future__ import annotations

import pytest
from mock_fault_support import FRIENDLI, SCENARIOS, both, module_scenarios, scenario, send
from mock_live import MODEL, LiveServer, Reply

LOOPING = {"model": MODEL, "prompt": "Example:", "max_tokens": 16, "temperature": 0}


def _text(reply: Reply) -> str:
    return reply.json()["choices"][0]["text"]


def _tokens(reply: Reply) -> list[int]:
    return reply.json()["choices"][0]["tokens"]


@scenario("penalties-ignored")
def _(live: LiveServer) -> None:
    greedy = _text(send(live, None, LOOPING))
    for field in ("presence_penalty", "frequency_penalty"):
        clean, faulty = both(live, "penalties-ignored", {**LOOPING, field: 2.0})
        assert _text(clean) != greedy and _text(faulty) == greedy


@scenario("top-k-ignored")
def _(live: LiveServer) -> None:
    payload = {**LOOPING, "temperature": 1.0, "seed": 1234, "top_k": 1}
    clean, faulty = both(live, "top-k-ignored", payload, FRIENDLI)
    greedy = _text(send(live, None, LOOPING, FRIENDLI))
    assert _text(clean) == greedy and _text(faulty) != greedy


@scenario("bad-words-ignored")
def _(live: LiveServer) -> None:
    first = _tokens(send(live, None, LOOPING, FRIENDLI))[0]
    clean, faulty = both(live, "bad-words-ignored",
                         {**LOOPING, "bad_word_tokens": [{"tokens": [first]}]}, FRIENDLI)
    assert first not in _tokens(clean) and _tokens(faulty)[0] == first
    clean, faulty = both(live, "bad-words-ignored", {**LOOPING, "bad_words": [" >>>"]}, FRIENDLI)
    assert " >>>" not in _text(clean) and " >>>" in _text(faulty)


@scenario("forced-output-ignored")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "forced-output-ignored",
                         {**LOOPING, "forced_output_tokens": [349, 97]}, FRIENDLI)
    assert _tokens(clean)[:2] == [349, 97] and _tokens(faulty)[:2] != [349, 97]


@pytest.mark.parametrize("name", module_scenarios(__name__))
def test_fault(server: LiveServer, name: str) -> None:
    SCENARIOS[name](server)
