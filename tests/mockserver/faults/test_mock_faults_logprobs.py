"""Faults of the ``logprobs`` object, with and without ``echo``."""

from __future__ import annotations

from typing import Any

import pytest
from mock_fault_support import (
    SCENARIOS,
    body,
    both,
    chunk_list,
    module_scenarios,
    scenario,
    send,
    streamed,
)
from mock_live import LiveServer, Reply

# -- logprobs -----------------------------------------------------------------------------


def logprobs_of(reply: Reply) -> dict[str, Any]:
    return reply.json()["choices"][0]["logprobs"]


@scenario("logprobs-offsets-misaligned")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "logprobs-offsets-misaligned", body(logprobs=1))
    assert logprobs_of(faulty)["text_offset"] == [o + 1 for o in logprobs_of(clean)["text_offset"]]


@scenario("echo-bos-counted")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "echo-bos-counted", body(logprobs=1, echo=True))
    before, after = logprobs_of(clean), logprobs_of(faulty)
    assert after["tokens"] == ["<s>", *before["tokens"]]
    assert after["text_offset"] == [0, *(o + 3 for o in before["text_offset"])]
    assert after["token_logprobs"][0] is None and after["top_logprobs"][0] is None
    plain = both(live, "echo-bos-counted", body(logprobs=1))
    assert logprobs_of(plain[0]) == logprobs_of(plain[1])  # echo off: untouched


@scenario("logprobs-offsets-from-completion")
def _(live: LiveServer) -> None:
    payload = body(logprobs=1)
    clean, faulty = both(live, "logprobs-offsets-from-completion", payload)
    shift = len(payload["prompt"])
    assert logprobs_of(faulty)["text_offset"] == [
        o - shift for o in logprobs_of(clean)["text_offset"]]
    assert logprobs_of(faulty)["text_offset"][0] == 0
    echoed = body(logprobs=1, echo=True)
    same = both(live, "logprobs-offsets-from-completion", echoed)
    assert logprobs_of(same[0]) == logprobs_of(same[1])  # under echo, 0 is the prompt's start


@scenario("logprobs-tokens-mismatch")
def _(live: LiveServer) -> None:
    faulty = send(live, "logprobs-tokens-mismatch", body(logprobs=1))
    assert "".join(logprobs_of(faulty)["tokens"]) != faulty.json()["choices"][0]["text"]


@scenario("logprobs-too-many-top")
def _(live: LiveServer) -> None:
    tops = logprobs_of(send(live, "logprobs-too-many-top", body(logprobs=2)))["top_logprobs"]
    assert all(len(top) == 4 for top in tops)


@scenario("logprobs-too-few-top")
def _(live: LiveServer) -> None:
    answer = logprobs_of(send(live, "logprobs-too-few-top", body(logprobs=3)))
    assert all(list(top) == [token]
               for token, top in zip(answer["tokens"], answer["top_logprobs"], strict=True))


@scenario("logprobs-positive")
def _(live: LiveServer) -> None:
    values = logprobs_of(send(live, "logprobs-positive", body(logprobs=1)))["token_logprobs"]
    assert all(v > 0 for v in values)


@scenario("logprobs-zero-off")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "logprobs-zero-off", body(logprobs=0))
    assert logprobs_of(clean) is not None and logprobs_of(faulty) is None


@scenario("logprobs-missing")
def _(live: LiveServer) -> None:
    assert logprobs_of(send(live, "logprobs-missing", body(logprobs=2))) is None
    chunks = chunk_list(send(live, "logprobs-missing", streamed(logprobs=2)))
    assert all(ch["logprobs"] is None for c in chunks for ch in c["choices"])


@scenario("echo-logprobs-first-not-null")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "echo-logprobs-first-not-null", body(echo=True, logprobs=1))
    assert logprobs_of(clean)["token_logprobs"][0] is None
    assert logprobs_of(faulty)["token_logprobs"][0] == 0.0
    assert logprobs_of(faulty)["top_logprobs"][0] is not None


@scenario("logprobs-top-missing-chosen")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "logprobs-top-missing-chosen", body(logprobs=0, temperature=0))
    tokens = logprobs_of(clean)["tokens"]
    assert [list(top) for top in logprobs_of(clean)["top_logprobs"]] == [[t] for t in tokens]
    assert logprobs_of(faulty)["top_logprobs"] == [{} for _ in tokens]
    greedy = body(logprobs=2, temperature=0)  # the sampled token is the most likely one
    assert logprobs_of(send(live, "logprobs-top-missing-chosen", greedy)) == \
        logprobs_of(send(live, None, greedy))


@scenario("echo-prompt-logprobs-missing")
def _(live: LiveServer) -> None:
    prompt = body()["prompt"]
    clean, faulty = both(live, "echo-prompt-logprobs-missing",
                         body(echo=True, logprobs=1, temperature=0))
    whole, cut = logprobs_of(clean), logprobs_of(faulty)
    skip = sum(1 for offset in whole["text_offset"] if offset < len(prompt))
    assert skip > 0 and cut["tokens"] == whole["tokens"][skip:]
    assert cut["text_offset"][0] == len(prompt) and cut["token_logprobs"][0] is not None
    assert faulty.json()["choices"][0]["text"].startswith(prompt)
    scored = body(prompt=[464, 1361], echo=True, logprobs=0, max_tokens=0)
    assert logprobs_of(send(live, "echo-prompt-logprobs-missing", scored))["tokens"] == []
    streamed_reply = send(live, "echo-prompt-logprobs-missing", {**scored, "stream": True})
    assert sum(len(ch["logprobs"]["tokens"]) for c in chunk_list(streamed_reply)
               for ch in c["choices"]) == 2  # streams are left alone


@scenario("logprobs-arrays-unequal")
def _(live: LiveServer) -> None:
    logprobs = logprobs_of(send(live, "logprobs-arrays-unequal", body(logprobs=1)))
    assert len(logprobs["text_offset"]) == len(logprobs["tokens"]) - 1


@pytest.mark.parametrize("name", module_scenarios(__name__))
def test_fault(server: LiveServer, name: str) -> None:
    SCENARIOS[name](server)
