"""Every fault changes the wire output in the way its name says (and the clean mock does not).

The harness later proves each fault breaks exactly its rule; here we prove each does what it
says. Stream-shape faults are in ``test_mock_faults_stream.py``; ``test_every_fault_has_a_scenario``
keeps the two tables complete as faults are added.
"""

from __future__ import annotations

import json
import re
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
    stop_case,
    stream_text,
    streamed,
)
from mock_live import ENGINE, MODEL, LiveServer, Reply

from mockserver.faults import fault_names
from mockserver.faults.transport import STALL_AFTER

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


# -- parameters ignored -------------------------------------------------------------------


@scenario("max-tokens-overrun")
def _(live: LiveServer) -> None:
    usage = send(live, "max-tokens-overrun", body(max_tokens=3)).json()["usage"]
    assert usage["completion_tokens"] == 4


@scenario("echo-ignored")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "echo-ignored", body(echo=True))
    assert clean.json()["choices"][0]["text"].startswith("The Python language")
    assert not faulty.json()["choices"][0]["text"].startswith("The Python language")


@scenario("n-identical")
def _(live: LiveServer) -> None:
    payload = body(n=3, temperature=1.0, max_tokens=8)
    clean, faulty = both(live, "n-identical", payload)
    assert len({c["text"] for c in clean.json()["choices"]}) > 1
    assert len({c["text"] for c in faulty.json()["choices"]}) == 1
    unseeded = {k: v for k, v in payload.items() if k != "seed"}
    friendli = send(live, "n-identical", unseeded, FRIENDLI).json()["choices"]
    assert len({c["text"] for c in friendli}) == 1 and len({c["seed"] for c in friendli}) == 1
    listed = send(live, "n-identical", {**payload, "n": 2, "seed": [11, 22]}, FRIENDLI)
    assert [c["seed"] for c in listed.json()["choices"]] == [11, 22]  # a seed list is honoured


@scenario("seeded-n-identical")
def _(live: LiveServer) -> None:
    payload = body(n=3, temperature=1.0, max_tokens=8)  # seed 11
    clean, faulty = both(live, "seeded-n-identical", payload)
    assert len({c["text"] for c in clean.json()["choices"]}) > 1
    assert len({c["text"] for c in faulty.json()["choices"]}) == 1
    unseeded = {k: v for k, v in payload.items() if k != "seed"}
    left = send(live, "seeded-n-identical", unseeded).json()["choices"]
    assert len({c["text"] for c in left}) > 1  # only seeded requests are affected


@scenario("stop-tokens-ignored")
def _(live: LiveServer) -> None:
    payload = {"model": MODEL, "prompt": "The Python language", "max_tokens": 8,
               "temperature": 0}
    tokens = send(live, None, payload, FRIENDLI).json()["choices"][0]["tokens"]
    k = next(k for k in range(1, len(tokens) - 1) if tokens[k] not in tokens[:k])
    stopped = {**payload, "stop_tokens": [{"tokens": [tokens[k]]}]}
    clean, faulty = both(live, "stop-tokens-ignored", stopped, FRIENDLI)
    assert clean.json()["choices"][0]["finish_reason"] == "stop"
    assert len(clean.json()["choices"][0]["tokens"]) <= k + 1
    assert faulty.json()["choices"][0]["tokens"] == tokens


@scenario("best-of-equal-n-rejected")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "best-of-equal-n-rejected", body(n=2, best_of=2))
    assert clean.status == 200 and (faulty.status, faulty.error["param"]) == (400, "best_of")
    assert send(live, "best-of-equal-n-rejected", body(n=1, best_of=3)).status == 200


@scenario("best-of-ignored")
def _(live: LiveServer) -> None:
    for seed in range(1, 40):
        plain = send(live, None, body(seed=seed, max_tokens=6)).json()["choices"][0]["text"]
        best = send(live, None, body(seed=seed, max_tokens=6, best_of=4)).json()
        if best["choices"][0]["text"] != plain:
            break
    else:
        pytest.fail("best_of never changed the text")
    faulty = send(live, "best-of-ignored", body(seed=seed, max_tokens=6, best_of=4)).json()
    assert faulty["choices"][0]["text"] == plain


@scenario("logit-bias-ignored")
def _(live: LiveServer) -> None:
    greedy = send(live, None, body(temperature=0, max_tokens=1, logprobs=0)).json()
    first = greedy["choices"][0]["logprobs"]["tokens"][0]
    token_id = next(i for i in range(ENGINE.vocab_size)
                    if ENGINE.tokenizer.token_display(i) == first)
    payload = body(temperature=0, max_tokens=1, logit_bias={str(token_id): -100})
    clean, faulty = both(live, "logit-bias-ignored", payload)
    assert clean.json()["choices"][0]["text"] != first
    assert faulty.json()["choices"][0]["text"] == first


@scenario("response-format-ignored")
def _(live: LiveServer) -> None:
    payload = {"model": MODEL, "prompt": "A list is", "max_tokens": 12, "temperature": 0,
               "response_format": {"type": "regex", "schema": "[a-c]{2,4}-[0-9]{1,3}"}}
    clean, faulty = both(live, "response-format-ignored", payload, FRIENDLI)
    assert re.fullmatch("[a-c]{2,4}-[0-9]{1,3}", clean.json()["choices"][0]["text"])
    plain = send(live, None, {k: v for k, v in payload.items() if k != "response_format"},
                 FRIENDLI)
    assert faulty.json()["choices"][0]["text"] == plain.json()["choices"][0]["text"]


def _ignored_like_absent(live: LiveServer, fault: str, prompt: str, **field: object) -> tuple:
    """The faulty answer equals the answer without ``field``; the clean one differs."""
    payload = {"model": MODEL, "prompt": prompt, "max_tokens": 16, "temperature": 0}
    clean, faulty = both(live, fault, {**payload, **field}, FRIENDLI)
    plain = send(live, None, payload, FRIENDLI).json()["choices"][0]
    assert faulty.json()["choices"][0]["tokens"] == plain["tokens"]
    assert clean.json()["choices"][0]["tokens"] != plain["tokens"]
    return clean.json()["choices"][0], plain


@scenario("min-tokens-ignored")
def _(live: LiveServer) -> None:
    clean, plain = _ignored_like_absent(live, "min-tokens-ignored", "It was going to be a fine",
                                        min_tokens=12)
    assert plain["finish_reason"] == "stop" and len(plain["tokens"]) < 12
    assert len(clean["tokens"]) >= 12


@scenario("no-repeat-ngram-ignored")
def _(live: LiveServer) -> None:
    clean, _plain = _ignored_like_absent(live, "no-repeat-ngram-ignored", "Example:",
                                         no_repeat_ngram=2)
    pairs = list(zip(clean["tokens"], clean["tokens"][1:], strict=False))
    assert len(pairs) == len(set(pairs))


@scenario("repetition-penalty-ignored")
def _(live: LiveServer) -> None:
    _ignored_like_absent(live, "repetition-penalty-ignored", "Example:", repetition_penalty=10.0)


@scenario("min-p-ignored")
def _(live: LiveServer) -> None:
    payload = {"model": MODEL, "prompt": "Example:", "max_tokens": 16, "temperature": 1.0,
               "seed": 1234, "min_p": 1.0}
    clean, faulty = both(live, "min-p-ignored", payload, FRIENDLI)
    greedy = send(live, None, {**payload, "temperature": 0, "min_p": None}, FRIENDLI)
    assert clean.json()["choices"][0]["text"] == greedy.json()["choices"][0]["text"]
    assert faulty.json()["choices"][0]["text"] != greedy.json()["choices"][0]["text"]


@scenario("token-prompt-rejected")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "token-prompt-rejected", body(prompt=[464, 1361]))
    assert clean.status == 200 and (faulty.status, faulty.error["param"]) == (400, "prompt")
    friendli = send(live, "token-prompt-rejected", {"model": MODEL, "tokens": [1], "max_tokens": 1},
                    FRIENDLI)
    assert (friendli.status, friendli.error["param"]) == (422, "tokens")
    assert send(live, "token-prompt-rejected", body()).status == 200


@scenario("prompt-list-500")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "prompt-list-500", body(prompt=["A list is", "In the"]))
    assert clean.status == 200
    assert faulty.status == 500 and set(faulty.error) == {"message", "type", "param", "code"}
    assert send(live, "prompt-list-500", body(prompt=["one prompt"])).status == 200
    assert send(live, "prompt-list-500", body()).status == 200


@scenario("unknown-fields-ignored")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "unknown-fields-ignored", body(frobnicate=True))
    assert (clean.status, clean.error["param"]) == (400, "frobnicate")
    assert faulty.status == 200 and faulty.json()["choices"][0]["text"]
    wrong = send(live, "unknown-fields-ignored", body(frobnicate=True, temperature=9))
    assert wrong.status == 400  # other invalid input is still rejected


@scenario("seed-ignored")
def _(live: LiveServer) -> None:
    payload = body(temperature=1.0, max_tokens=8)
    clean = {send(live, None, payload).json()["choices"][0]["text"] for _ in range(3)}
    faulty = {send(live, "seed-ignored", payload).json()["choices"][0]["text"] for _ in range(3)}
    assert len(clean) == 1 and len(faulty) > 1


@scenario("stream-differs")
def _(live: LiveServer) -> None:
    payload = body(temperature=0, max_tokens=8)
    whole = send(live, "stream-differs", payload).json()["choices"][0]["text"]
    assert stream_text(send(live, None, {**payload, "stream": True})) == whole
    assert stream_text(send(live, "stream-differs", {**payload, "stream": True})) != whole


# -- logprobs -----------------------------------------------------------------------------


def logprobs_of(reply: Reply) -> dict[str, Any]:
    return reply.json()["choices"][0]["logprobs"]


@scenario("logprobs-offsets-misaligned")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "logprobs-offsets-misaligned", body(logprobs=1))
    assert logprobs_of(faulty)["text_offset"] == [o + 1 for o in logprobs_of(clean)["text_offset"]]


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


# -- the table ----------------------------------------------------------------------------


def test_every_fault_has_a_scenario() -> None:
    import test_mock_faults_stream  # noqa: F401 - registers the stream scenarios

    assert sorted(SCENARIOS) == fault_names()


@pytest.mark.parametrize("name", module_scenarios(__name__))
def test_fault(server: LiveServer, name: str) -> None:
    SCENARIOS[name](server)
