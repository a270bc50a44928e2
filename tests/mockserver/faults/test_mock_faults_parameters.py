"""Faults that ignore a request parameter (its answer is the one without it), or bend it."""

from __future__ import annotations

import re

import pytest
from mock_fault_support import (
    FRIENDLI,
    SCENARIOS,
    body,
    both,
    module_scenarios,
    scenario,
    send,
    stream_text,
)
from mock_live import ENGINE, MODEL, LiveServer

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


@scenario("upstream-down-page")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "upstream-down-page", body(prompt=["A list is", "In the"]))
    assert clean.status == 200
    assert (faulty.status, faulty.headers.get("retry-after")) == (503, "0")
    assert "error" not in faulty.json() and "ECONNREFUSED" in faulty.json()["html-message"]
    assert send(live, "upstream-down-page", body(prompt=["one prompt"])).status == 200
    assert send(live, "upstream-down-page", body()).status == 200


@scenario("model-substituted")
def _(live: LiveServer) -> None:
    unnamed = {k: v for k, v in body().items() if k != "model"}
    clean, faulty = both(live, "model-substituted", unnamed)
    assert (clean.status, clean.error["param"]) == (400, "model")
    assert faulty.status == 404 and "text-davinci-003" in faulty.error["message"]
    friendli = send(live, "model-substituted", unnamed, FRIENDLI)
    assert friendli.status == 404 and "text-davinci-003" in friendli.error["message"]
    assert send(live, "model-substituted", body()).status == 200
    assert send(live, "model-substituted", body(temperature=9)).status == 400


@scenario("greedy-n-refused")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "greedy-n-refused", body(n=2, temperature=0))
    assert clean.status == 200
    assert faulty.status == 400 and faulty.error["param"] == "n"
    assert "greedy" in faulty.error["message"]
    assert send(live, "greedy-n-refused", body(n=2, temperature=1.0)).status == 200
    assert send(live, "greedy-n-refused", body(temperature=0)).status == 200


@scenario("unknown-fields-ignored")
def _(live: LiveServer) -> None:
    clean, faulty = both(live, "unknown-fields-ignored", body(frobnicate=True))
    assert (clean.status, clean.error["param"]) == (400, "frobnicate")
    assert faulty.status == 200 and faulty.json()["choices"][0]["text"]
    # every unknown field is ignored, not only the first named (fuzzed bodies hold several)
    assert send(live, "unknown-fields-ignored", body(frobnicate=True, zz=1)).status == 200
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


@pytest.mark.parametrize("name", module_scenarios(__name__))
def test_fault(server: LiveServer, name: str) -> None:
    SCENARIOS[name](server)
