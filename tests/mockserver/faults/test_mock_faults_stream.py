"""Faults of streams: SSE framing, chunk order, usage, identity (see mock_fault_support)."""

from __future__ import annotations

import json

import pytest
from mock_fault_support import (
    SCENARIOS,
    Scenario,
    body,
    both,
    chunk_list,
    finish_positions,
    module_scenarios,
    scenario,
    send,
    streamed,
    usage_positions,
)
from mock_live import LiveServer

# -- SSE framing --------------------------------------------------------------------------


@scenario("done-missing")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "done-missing", streamed())
    assert clean.events()[-1] == "[DONE]"
    assert "[DONE]" not in faulty.events()
    assert len(faulty.events()) == len(clean.events()) - 1


@scenario("done-doubled")
def _(live: LiveServer) -> None:
    assert send(live, "done-doubled", streamed()).events()[-2:] == ["[DONE]", "[DONE]"]


@scenario("done-early")
def _(live: LiveServer) -> None:
    faulty = send(live, "done-early", streamed())
    chunks = chunk_list(faulty)
    assert faulty.events()[-1] == "[DONE]"
    assert finish_positions(chunks) == [] and usage_positions(chunks) == []


@scenario("data-after-done")
def _(live: LiveServer) -> None:
    events = send(live, "data-after-done", streamed()).events()
    assert events.index("[DONE]") == len(events) - 2
    assert json.loads(events[-1])["choices"] == []


@scenario("event-unterminated")
def _(live: LiveServer) -> None:
    faulty = send(live, "event-unterminated", streamed())
    assert faulty.data.endswith(b"data: [DONE]\n") and not faulty.data.endswith(b"\n\n")
    assert "[DONE]" not in faulty.events()


@scenario("events-not-separated")
def _(live: LiveServer) -> None:
    events = send(live, "events-not-separated", streamed()).events()
    merged = [e for e in events if "\n" in e]
    assert len(merged) == 1 and merged[0].count("\n") == 1


@scenario("json-split")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "json-split", streamed())
    assert len(faulty.events()) == len(clean.events()) + 1
    with pytest.raises(json.JSONDecodeError):
        faulty.chunks()


@scenario("invalid-utf8")
def _(live: LiveServer) -> None:
    faulty = send(live, "invalid-utf8", streamed())
    assert b'"text":"\xff\xfe' in faulty.data
    with pytest.raises(UnicodeDecodeError):
        faulty.data.decode("utf-8")


# -- chunk order --------------------------------------------------------------------------


@scenario("usage-before-finish")
def _(live: LiveServer) -> None:
    chunks = chunk_list(send(live, "usage-before-finish", streamed(n=2)))
    assert usage_positions(chunks)[0] < finish_positions(chunks)[0]


@scenario("text-after-finish")
def _(live: LiveServer) -> None:
    chunks = chunk_list(send(live, "text-after-finish", streamed()))
    finish = finish_positions(chunks)[0]
    assert any(c["choices"] and c["choices"][0]["finish_reason"] is None
               for c in chunks[finish + 1:])


@scenario("finish-doubled")
def _(live: LiveServer) -> None:
    chunks = chunk_list(send(live, "finish-doubled", streamed()))
    first, second = finish_positions(chunks)
    reasons = [chunks[i]["choices"][0]["finish_reason"] for i in (first, second)]
    assert reasons[0] != reasons[1]  # a plain repeat is valid (OpenAI's length finish)


@scenario("finish-missing")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "finish-missing", streamed())
    assert finish_positions(chunk_list(clean)) and not finish_positions(chunk_list(faulty))


# -- usage --------------------------------------------------------------------------------


@scenario("usage-unrequested")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "usage-unrequested", body(stream=True))
    assert not usage_positions(chunk_list(clean)) and usage_positions(chunk_list(faulty))


@scenario("usage-missing")
def _(live: LiveServer) -> None:
    assert "usage" not in send(live, "usage-missing", body()).json()
    assert not usage_positions(chunk_list(send(live, "usage-missing", streamed())))


@scenario("usage-total-wrong")
def _(live: LiveServer) -> None:
    usage = send(live, "usage-total-wrong", body()).json()["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] + 1


@scenario("completion-tokens-left-out")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "completion-tokens-left-out", body())
    assert clean.json()["usage"]["completion_tokens"] > 0
    assert "completion_tokens" not in faulty.json()["usage"]


@scenario("usage-prompt-times-n")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "usage-prompt-times-n", body(n=2))
    assert faulty.json()["usage"]["prompt_tokens"] == 2 * clean.json()["usage"]["prompt_tokens"]


@scenario("usage-choices-not-empty")
def _(live: LiveServer) -> None:
    chunks = chunk_list(send(live, "usage-choices-not-empty", streamed()))
    assert chunks[-1]["usage"] and chunks[-1]["choices"] != []


@scenario("usage-key-missing-on-chunks")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "usage-key-missing-on-chunks", streamed())
    assert all("usage" in c for c in chunk_list(clean))
    chunks = chunk_list(faulty)
    assert [c for c in chunks if "usage" in c] == [chunks[-1]] and chunks[-1]["usage"]


@scenario("usage-completion-off-by-one")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "usage-completion-off-by-one", body())
    real, usage = clean.json()["usage"], faulty.json()["usage"]
    assert usage["completion_tokens"] == real["completion_tokens"] - 1
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


@scenario("usage-stream-differs")
def _(live: LiveServer) -> None:
    whole = send(live, "usage-stream-differs", body()).json()["usage"]
    stream_usage = chunk_list(send(live, "usage-stream-differs", streamed()))[-1]["usage"]
    assert stream_usage != whole


# -- identity -----------------------------------------------------------------------------


def _identity_changes(live: LiveServer, field: str) -> None:
    clean, faulty = both(live, f"{field}-changes", streamed())
    assert len({c[field] for c in chunk_list(clean)}) == 1
    assert len({c[field] for c in chunk_list(faulty)}) > 1


def _identity_scenario(field: str) -> Scenario:
    def run(live: LiveServer) -> None:
        _identity_changes(live, field)

    return run


for _field in ("id", "created", "model"):
    scenario(f"{_field}-changes")(_identity_scenario(_field))


@scenario("object-wrong")
def _(live: LiveServer) -> None:
    assert send(live, "object-wrong", body()).json()["object"] == "text.completion"
    assert {c["object"] for c in chunk_list(send(live, "object-wrong", streamed()))} == {
        "text.completion"}


@scenario("field-wrong-type")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "field-wrong-type", body())
    assert isinstance(clean.json()["created"], int)
    assert isinstance(faulty.json()["created"], str) and faulty.json()["created"].isdigit()
    created = {type(c["created"]) for c in chunk_list(send(live, "field-wrong-type", streamed()))}
    assert created == {str}


@pytest.mark.parametrize("name", module_scenarios(__name__))
def test_stream_fault(server: LiveServer, name: str) -> None:
    SCENARIOS[name](server)
