"""Faults of text and transport: content types, disconnects, stalls, UTF-8, FriendliAI ids."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from mock_fault_support import (
    FRIENDLI,
    SCENARIOS,
    body,
    both,
    chunk_list,
    module_scenarios,
    raw_exchange,
    scenario,
    send,
    stream_text,
    streamed,
)
from mock_live import MODEL, LiveServer, Reply

from mockserver.faults.transport import STALL_AFTER

# -- text and transport -------------------------------------------------------------------


@scenario("utf8-split-replacement")
def _(live: LiveServer) -> None:
    emoji_bytes = [240, 159, 152, 128]  # byte-level tokens 0..255 are single bytes
    payload = {"model": MODEL, "prompt": "x", "forced_output_tokens": [195, 169, *emoji_bytes],
               "max_tokens": 6, "stream": True}
    clean, faulty = both(live, "utf8-split-replacement", payload, FRIENDLI)
    assert stream_text(clean) == "é😀"
    assert "\ufffd" in stream_text(faulty)


@scenario("content-type-wrong")
def _(live: LiveServer) -> None:
    assert send(live, "content-type-wrong", streamed()).content_type == "application/json"
    assert send(live, "content-type-wrong", body()).content_type == "application/json"


@scenario("content-type-json-wrong")
def _(live: LiveServer) -> None:
    assert send(live, "content-type-json-wrong", body()).content_type.startswith("text/plain")
    assert send(live, "content-type-json-wrong", streamed()).content_type == "text/event-stream"


@scenario("invalid-input-500")
def _(live: LiveServer) -> None:
    faulty = send(live, "invalid-input-500", body(temperature=3))
    assert faulty.status == 500 and faulty.error["type"] == "server_error"
    assert send(live, "invalid-input-500", body()).status == 200


@scenario("invalid-input-200")
def _(live: LiveServer) -> None:
    faulty = send(live, "invalid-input-200", body(temperature=3))
    assert faulty.status == 200 and faulty.json()["object"] == "text_completion"
    streamed_reply = send(live, "invalid-input-200", body(temperature=3, stream=True))
    assert streamed_reply.status == 200 and streamed_reply.events()[-1] == "[DONE]"


@scenario("error-no-envelope")
def _(live: LiveServer) -> None:
    faulty = send(live, "error-no-envelope", body(temperature=3))
    assert faulty.status == 400 and faulty.content_type.startswith("text/plain")
    assert b"temperature" in faulty.data and not faulty.data.startswith(b"{")


@scenario("error-param-missing")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "error-param-missing", body(temperature=3))
    assert (clean.status, clean.error["param"]) == (400, "temperature")
    assert (faulty.status, faulty.error["param"]) == (400, None)
    assert faulty.error["message"] == clean.error["message"]


@scenario("error-cached")
def _(live: LiveServer) -> None:
    assert send(live, "error-cached", body(temperature=3)).status == 400
    corrected = send(live, "error-cached", body())
    assert (corrected.status, corrected.error["param"]) == (400, "temperature")
    assert send(live, None, body()).status == 200
    assert send(live, "error-cached", body(max_tokens=5)).status == 200
    friendli = {"model": MODEL, "prompt": "Hi", "max_tokens": 2}
    assert send(live, "error-cached", {**friendli, "n": 0}, FRIENDLI).status == 422
    assert send(live, "error-cached", friendli, FRIENDLI).status == 422
    assert send(live, "error-cached", friendli).status == 200  # another route, another key


@scenario("error-in-stream")
def _(live: LiveServer) -> None:
    faulty = send(live, "error-in-stream", body(temperature=3, stream=True))
    assert faulty.status == 200 and faulty.content_type == "text/event-stream"
    events = faulty.chunks()
    assert events[0]["error"]["param"] == "temperature" and events[1:] == ["[DONE]"]
    assert send(live, "error-in-stream", body(temperature=3)).status == 400


@scenario("stream-options-ignored-error")
def _(live: LiveServer) -> None:
    payload = body(stream_options={"include_usage": True})
    clean, faulty = both(live, "stream-options-ignored-error", payload)
    assert clean.status == 400 and faulty.status == 200


@scenario("disconnect-mid-stream")
def _(live: LiveServer) -> None:
    faulty = send(live, "disconnect-mid-stream", streamed(max_tokens=20))
    assert not faulty.complete
    assert b"[DONE]" not in faulty.data and b'"finish_reason":"' not in faulty.data


@scenario("disconnect-mid-body")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "disconnect-mid-body", body(max_tokens=8))
    assert clean.complete and not faulty.complete
    assert faulty.status == 200 and 0 < len(faulty.data) < len(clean.data)
    streamed_reply = send(live, "disconnect-mid-body", streamed(max_tokens=8))
    assert streamed_reply.complete  # streams are left alone (disconnect-mid-stream's)


@scenario("slow-drip")
def _(live: LiveServer) -> None:
    payload = json.dumps(body(stream=True, max_tokens=1)).encode()
    reads, data = raw_exchange(live, payload, "slow-drip", timeout=30)
    assert data.endswith(b"data: [DONE]\n\n") and reads > 100


@scenario("stall")
def _(live: LiveServer) -> None:
    payload = json.dumps(body(stream=True, max_tokens=20)).encode()
    _reads, data = raw_exchange(live, payload, "stall", timeout=0.5)
    assert data.count(b"data: ") == STALL_AFTER and b"[DONE]" not in data
    time.sleep(0.2)
    assert send(live, None, body()).status == 200  # the stalled stream holds nothing else


@scenario("models-shape-wrong")
def _(live: LiveServer) -> None:
    faulty = live.call("GET", "/v1/models", headers={"X-Mock-Fault": "models-shape-wrong"})
    assert isinstance(faulty.json(), list) and faulty.json()[0]["id"] == MODEL


@scenario("model-unlisted")
def _(live: LiveServer) -> None:
    clean = live.call("GET", "/v1/models")
    faulty = live.call("GET", "/v1/models", headers={"X-Mock-Fault": "model-unlisted"})
    assert [m["id"] for m in clean.json()["data"]] == [MODEL]
    assert faulty.json() == {"object": "list", "data": []}


@scenario("token-field-missing")
def _(live: LiveServer) -> None:
    payload = {"model": MODEL, "prompt": "Hi", "max_tokens": 3, "stream": True}
    clean, faulty = both(live, "token-field-missing", payload, FRIENDLI)
    assert any("token" in ch for c in chunk_list(clean) for ch in c["choices"])
    assert not any("token" in ch for c in chunk_list(faulty) for ch in c["choices"])


@scenario("choice-seed-missing")
def _(live: LiveServer) -> None:
    payload = {"model": MODEL, "prompt": "Hi", "max_tokens": 3}
    clean, faulty = both(live, "choice-seed-missing", payload, FRIENDLI)
    assert "seed" in clean.json()["choices"][0] and "seed" not in faulty.json()["choices"][0]


@scenario("stream-token-ids-differ")
def _(live: LiveServer) -> None:
    payload = {"model": MODEL, "prompt": "Hi", "max_tokens": 3, "temperature": 0}

    def ids(reply: Reply) -> list[int]:
        return [ch["token"] for c in chunk_list(reply) for ch in c["choices"] if "token" in ch]

    streaming = {**payload, "stream": True}
    clean, faulty = both(live, "stream-token-ids-differ", streaming, FRIENDLI)
    assert ids(faulty) == [t + 1 for t in ids(clean)] and ids(clean)
    whole = send(live, "stream-token-ids-differ", payload, FRIENDLI).json()["choices"][0]
    assert whole["tokens"] == ids(clean)


@scenario("last-token-id-missing")
def _(live: LiveServer) -> None:
    payload = {"model": MODEL, "prompt": "Hi", "max_tokens": 3, "temperature": 0,
               "stream": True}
    clean, faulty = both(live, "last-token-id-missing", payload, FRIENDLI)

    def sent(reply: Reply) -> tuple[str, list[int], list[dict[str, Any]]]:
        entries = [ch for c in chunk_list(reply) for ch in c["choices"]]
        return ("".join(ch["text"] for ch in entries),
                [ch["token"] for ch in entries if "token" in ch], entries)

    (text, ids, _), (faulty_text, faulty_ids, entries) = sent(clean), sent(faulty)
    assert faulty_text == text and faulty_ids == ids[:-1] and len(ids) == 3
    assert entries[-1]["finish_reason"] and entries[-1]["text"] and "token" not in entries[-1]


@pytest.mark.parametrize("name", module_scenarios(__name__))
def test_fault(server: LiveServer, name: str) -> None:
    SCENARIOS[name](server)
