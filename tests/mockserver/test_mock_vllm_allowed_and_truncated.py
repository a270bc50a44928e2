"""``--profile vllm`` honours ``allowed_token_ids`` and ``truncate_prompt_tokens`` over HTTP,
refuses their out-of-range values with vLLM's words in the mock's error envelope, and the
embedded mock the harness starts answers both (``conformance fuzz --profile vllm`` draws them)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from mock_live import ENGINE, MODEL, LiveServer, call

from conformance.target.embedded import EmbeddedMock, serving_args
from mockserver import MockConfig

STORY = "Once upon a time there was a little cat who lived in a house by the sea"


@pytest.fixture(scope="module")
def vllm() -> Iterator[LiveServer]:
    with LiveServer(MockConfig(profile_refs=("vllm",))) as live:
        yield live


def body(**extra: Any) -> dict[str, Any]:
    return {"model": MODEL, "prompt": STORY, "max_tokens": 8, "seed": 3, **extra}


def first_ids(*texts: str) -> list[int]:
    return sorted({ENGINE.tokenizer.encode(text)[0] for text in texts})


def test_allowed_token_ids_holds_every_token_and_repeats_byte_for_byte(vllm: LiveServer) -> None:
    allowed = first_ids(" the", " a", " cat", ".")
    fields = body(allowed_token_ids=allowed, logprobs=1, return_tokens_as_token_ids=True)
    answer = vllm.post("/v1/completions", fields)
    assert answer.status == 200, answer.data
    choice = answer.json()["choices"][0]
    ids = [int(name.split(":")[1]) for name in choice["logprobs"]["tokens"]]
    assert len(ids) == 8 and set(ids) <= set(allowed)
    assert vllm.post("/v1/completions", fields).json()["choices"] == answer.json()["choices"]
    streamed = vllm.post("/v1/completions", {**fields, "stream": True})
    assert "".join(c["choices"][0]["text"] for c in streamed.chunks()
                   if isinstance(c, dict) and c["choices"]) == choice["text"]


@pytest.mark.parametrize(("value", "message"), [
    ([3, 10**6], "allowed_token_ids contains out-of-vocab token id!"),
    ([], None),
])
def test_an_empty_or_out_of_vocabulary_whitelist_is_refused(vllm: LiveServer, value: list[int],
                                                            message: str | None) -> None:
    refused = vllm.post("/v1/completions", body(allowed_token_ids=value))
    assert (refused.status, refused.error["param"]) == (400, "allowed_token_ids")
    if message is not None:
        assert message in refused.error["message"]


def test_truncate_prompt_tokens_counts_the_kept_tokens_and_echoes_the_prompt_as_sent(
        vllm: LiveServer) -> None:
    kept = ENGINE.tokenizer.encode(STORY)[-6:]
    truncated = vllm.post("/v1/completions", body(truncate_prompt_tokens=6, logprobs=0))
    assert truncated.status == 200, truncated.data
    as_ids = vllm.post("/v1/completions", body(prompt=kept, logprobs=0, ignore_eos=False))
    assert truncated.json()["usage"]["prompt_tokens"] == 6
    assert truncated.json()["choices"][0]["text"] == as_ids.json()["choices"][0]["text"]
    echoed = vllm.post("/v1/completions", body(truncate_prompt_tokens=6, echo=True,
                                               logprobs=0)).json()
    choice = echoed["choices"][0]
    assert choice["text"].startswith(STORY) and echoed["usage"]["prompt_tokens"] == 6
    tokens, offsets = choice["logprobs"]["tokens"], choice["logprobs"]["text_offset"]
    assert "".join(tokens[:6]) == ENGINE.tokenizer.decode(kept)
    assert all(choice["text"][at:].startswith(token)
               for token, at in zip(tokens, offsets, strict=True))
    whole = vllm.post("/v1/completions", body(truncate_prompt_tokens=-1)).json()
    assert whole["usage"]["prompt_tokens"] == len(ENGINE.tokenizer.encode(STORY))


@pytest.mark.parametrize(("value", "message"), [
    (ENGINE.context_length, f"truncate_prompt_tokens={ENGINE.context_length} cannot be greater "
     f"than max_model_len - max_tokens = {ENGINE.context_length - 8}. Please request a smaller "
     "truncation size."),
    (0, None),
    (-2, None),
])
def test_a_truncation_out_of_range_is_refused(vllm: LiveServer, value: int,
                                              message: str | None) -> None:
    refused = vllm.post("/v1/completions", body(truncate_prompt_tokens=value))
    assert (refused.status, refused.error["param"]) == (400, "truncate_prompt_tokens")
    if message is not None:
        assert refused.error["message"] == message


def test_the_built_in_route_still_takes_neither_field(
        make_server: Callable[..., LiveServer]) -> None:
    strict = make_server()
    for field, value in (("allowed_token_ids", [5]), ("truncate_prompt_tokens", 2)):
        refused = strict.post("/v1/completions", body(**{field: value}))
        assert (refused.status, refused.error["param"]) == (400, field)


def test_the_embedded_mock_answers_both_fields_under_the_vllm_profile() -> None:
    """The mock ``conformance fuzz --profile vllm`` starts (its own process, over HTTP)."""
    with EmbeddedMock(serving_args("vllm")) as mock:
        port = int(mock.openai_url.rsplit(":", 1)[1].split("/")[0])
        for field, value in (("allowed_token_ids", [5, 17]), ("truncate_prompt_tokens", 3),
                             ("truncate_prompt_tokens", -1)):
            answer = call(port, "POST", "/v1/completions", body(**{field: value}))
            assert answer.status == 200, (field, answer.data)
