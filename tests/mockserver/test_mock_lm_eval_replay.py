"""lm-eval's loglikelihood requests, as a real run sent them, answered as lm-eval reads them.

The fixture (``tests/fixtures/lm_eval/lm_eval_run.json``, made by ``docs/lm-eval/``'s
``record_requests.py`` and ``make_fixture.py`` from a ``local-completions`` run of the two
tasks there, batch size 4) holds lm-eval's request bodies exactly as sent (token-id prompts in
batches, ``echo``, ``logprobs: 1``, ``max_tokens: 1``, ``temperature: 0``, ``seed``) and what it
computed from the answers. lm-eval's ``parse_logprobs`` reads ``token_logprobs[ctxlen:-1]``
(the continuation, without the one generated token) and calls it greedy when each of those
equals the best of its ``top_logprobs``; ``lm_eval_reads`` does the same here, so the test needs
no lm-eval (the run itself is the opt-in ``lm_eval`` test).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mock_live import ENGINE, LiveServer
from tokenizers import Tokenizer as HFTokenizer

from reference_engine import CONTEXT_LENGTH, GenerationRequest
from reference_engine.tokenizer.huggingface import files

RUN = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "lm_eval"
                  / "lm_eval_run.json").read_text(encoding="utf-8"))
TOKENIZER = ENGINE.tokenizer
EXPORTED = HFTokenizer.from_str(
    files(TOKENIZER, context_length=CONTEXT_LENGTH)["tokenizer.json"].decode("utf-8"))


def encode(text: str) -> list[int]:
    """The exported tokenizer's ids, checked against the engine's on the way."""
    ids = EXPORTED.encode(text).ids
    assert ids == TOKENIZER.encode(text)
    return ids


def encode_pair(context: str, continuation: str) -> tuple[list[int], list[int]]:
    """lm-eval's ``_encode_pair``: trailing spaces of the context go to the continuation, the
    continuation's ids are the whole's after the context's, and an empty context is the
    prefix token (the eos)."""
    if not context:
        return [TOKENIZER.eot_id], encode(continuation)
    spaces = len(context) - len(context.rstrip())
    if spaces:
        context, continuation = context[:-spaces], context[-spaces:] + continuation
    whole, head = encode(context + continuation), encode(context)
    return head, whole[len(head):]


def scored() -> dict[tuple[int, ...], tuple[int, float, bool | None]]:
    """Each prompt lm-eval sent -> (context length, lm-eval's logprob, its is_greedy)."""
    out: dict[tuple[int, ...], tuple[int, float, bool | None]] = {}
    for entry in RUN["loglikelihood"]:
        head, tail = encode_pair(entry["context"], entry["continuation"])
        out[tuple(head + tail)] = (len(head), entry["logprob"], entry["is_greedy"])
    for entry in RUN["loglikelihood_rolling"]:
        out[(TOKENIZER.eot_id, *encode(entry["text"]))] = (1, entry["logprob"], None)
    return out


def lm_eval_reads(choice: dict, ctxlen: int) -> tuple[float, bool]:
    """``LocalCompletionsAPI.parse_logprobs`` for one choice."""
    logprobs = choice["logprobs"]["token_logprobs"][ctxlen:-1]
    tops = choice["logprobs"]["top_logprobs"][ctxlen:-1]
    greedy = all(value == max(top.values()) for value, top in zip(logprobs, tops, strict=True))
    return sum(logprobs), greedy


def test_the_recorded_requests_have_lm_evals_shape() -> None:
    assert RUN["requests"] and RUN["loglikelihood"] and RUN["loglikelihood_rolling"]
    for body in RUN["requests"]:
        assert body["echo"] is True and body["logprobs"] == 1 and body["temperature"] == 0
        assert body["max_tokens"] in (0, 1)
        assert all(isinstance(p, list) and all(isinstance(i, int) for i in p)
                   for p in body["prompt"])
    assert max(len(body["prompt"]) for body in RUN["requests"]) > 1  # batches


def test_every_prompt_is_the_exported_tokenization_of_context_and_continuation() -> None:
    sent = [tuple(prompt) for body in RUN["requests"] for prompt in body["prompt"]]
    assert sorted(sent) == sorted(scored())


@pytest.mark.parametrize("index", range(len(RUN["requests"])))
def test_replayed_answers_give_what_lm_eval_computed(server: LiveServer, index: int) -> None:
    body = RUN["requests"][index]
    reply = server.call("POST", "/v1/completions", body)
    assert reply.status == 200, reply.data
    expected = scored()
    choices = sorted(reply.json()["choices"], key=lambda choice: choice["index"])
    assert len(choices) == len(body["prompt"])
    for prompt, choice in zip(body["prompt"], choices, strict=True):
        ctxlen, logprob, is_greedy = expected[tuple(prompt)]
        tokens = choice["logprobs"]["tokens"]
        assert tokens[:len(prompt)] == [TOKENIZER.token_display(i) for i in prompt]
        assert choice["logprobs"]["token_logprobs"][0] is None
        assert len(tokens) == len(prompt) + body["max_tokens"]
        got, greedy = lm_eval_reads(choice, ctxlen)
        assert got == logprob
        if is_greedy is not None:
            assert greedy is is_greedy


@pytest.mark.parametrize("index", range(len(RUN["requests"])))
def test_lm_evals_numbers_are_the_engines(index: int) -> None:
    expected = scored()
    for prompt in RUN["requests"][index]["prompt"]:
        ctxlen, logprob, is_greedy = expected[tuple(prompt)]
        completion = ENGINE.complete(GenerationRequest(
            prompts=(tuple(prompt),), echo=True, logprobs=1, max_tokens=0))
        entries = completion.choices[0].logprobs
        assert entries is not None and len(entries) == len(prompt)
        continuation = entries[ctxlen:]
        assert sum(e.logprob for e in continuation if e.logprob is not None) == logprob
        if is_greedy is not None:
            assert is_greedy is all(e.top and e.logprob == max(e.top.values())
                                    for e in continuation)


def test_max_tokens_zero_gives_the_same_prompt_logprobs(server: LiveServer) -> None:
    """Other lm-eval versions and clients score with ``max_tokens: 0``: the echoed prompt's
    logprobs are the same, with no generated token after them."""
    body = RUN["requests"][0]
    with_one = server.call("POST", "/v1/completions", body).json()["choices"]
    with_zero = server.call("POST", "/v1/completions", {**body, "max_tokens": 0}).json()["choices"]
    for one, zero in zip(with_one, with_zero, strict=True):
        assert zero["logprobs"]["token_logprobs"] == one["logprobs"]["token_logprobs"][:-1]
        assert zero["logprobs"]["top_logprobs"] == one["logprobs"]["top_logprobs"][:-1]
