"""Valid rendering variants (issue 37, part 4): chosen like faults, and each the same answer.

Every variant keeps each choice's text, logprobs and usage as the default rendering has them;
only where chunks end, what decorates them and how events are framed differ.
"""

from __future__ import annotations

import subprocess
import sys
from collections import defaultdict
from typing import Any

import pytest
from mock_live import MODEL, LiveServer

from mockserver import MockConfig
from mockserver.variants import UnknownVariantError, all_variants, parse_variant_names

STREAM = {"model": MODEL, "prompt": ["Hello", "The café"], "max_tokens": 6, "n": 2, "seed": 7,
          "stream": True, "logprobs": 1, "stream_options": {"include_usage": True}}
VARIANT_NAMES = [variant.name for variant in all_variants()]


def per_choice(chunks: list[Any]) -> dict[int, list[dict[str, Any]]]:
    choices: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for chunk in chunks:
        if chunk != "[DONE]":
            for choice in chunk["choices"]:
                choices[choice["index"]].append(choice)
    return choices


def summary(chunks: list[Any]) -> tuple[dict[int, tuple[str, list[str], str]], Any]:
    """Each choice's text, logprob tokens and finish reason, and the last chunk's usage."""
    joined = {
        index: ("".join(c["text"] for c in choices),
                [t for c in choices for t in (c["logprobs"] or {}).get("tokens", [])],
                next(c["finish_reason"] for c in choices if c["finish_reason"]))
        for index, choices in per_choice(chunks).items()
    }
    return joined, chunks[-2]["usage"]


def stream(server: LiveServer, body: dict[str, Any], variant: str | None = None) -> list[Any]:
    headers = {"X-Mock-Variant": variant} if variant else {}
    reply = server.post("/v1/completions", body, headers=headers)
    assert reply.status == 200, reply.data
    return reply.chunks()


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_a_variant_keeps_every_choice_and_the_usage(server: LiveServer, variant: str) -> None:
    assert summary(stream(server, STREAM, variant)) == summary(stream(server, STREAM))


@pytest.mark.parametrize("echo", [False, True])
@pytest.mark.parametrize("max_tokens", [1, 2, 5, 16])
def test_finish_on_last_token_sends_at_most_max_tokens_chunks_none_empty(
    server: LiveServer, max_tokens: int, echo: bool
) -> None:
    """What vLLM's own completion tests assert of vLLM; an echoed prompt rides on the first
    token's chunk, as vLLM's stream prepends it to the first delta."""
    body = {**STREAM, "max_tokens": max_tokens, "stop": ["."], "echo": echo}
    choices = per_choice(stream(server, body, "finish-on-last-token"))
    assert len(choices) == 4
    for sent in choices.values():
        assert 1 <= len(sent) <= max_tokens
        assert all(choice["text"] for choice in sent)
        assert [c["finish_reason"] is not None for c in sent] == [False] * (len(sent) - 1) + [True]
    if echo:
        assert summary(stream(server, body, "finish-on-last-token")) == summary(
            stream(server, body))


def test_finish_on_last_token_keeps_friendlis_token_ids(server: LiveServer) -> None:
    body = {"model": MODEL, "prompt": "Hello", "max_tokens": 4, "seed": 3, "stream": True}

    def tokens(variant: str | None) -> list[int]:
        headers = {"X-Mock-Variant": variant} if variant else {}
        chunks = server.post("/dedicated/v1/completions", body, headers=headers).chunks()
        return [c["choices"][0]["token"] for c in chunks[:-1] if "token" in c["choices"][0]]

    assert tokens("finish-on-last-token") == tokens(None) and len(tokens(None)) == 4


def test_empty_text_chunks_precede_tokens(server: LiveServer) -> None:
    choices = per_choice(stream(server, STREAM, "split-utf8-held"))
    for sent in choices.values():
        assert sent[0]["text"] == "" and sent[0]["logprobs"]["tokens"] == []


def test_usage_every_chunk_counts_up_to_the_totals(server: LiveServer) -> None:
    chunks = [c for c in stream(server, STREAM, "usage-every-chunk") if c != "[DONE]"]
    counts = [chunk["usage"]["completion_tokens"] for chunk in chunks]
    assert counts == sorted(counts) and counts[-1] == chunks[-1]["usage"]["completion_tokens"]
    assert all(c["usage"]["total_tokens"] == c["usage"]["prompt_tokens"] +
               c["usage"]["completion_tokens"] for c in chunks)


def test_null_usage_absent_leaves_the_key_out(server: LiveServer) -> None:
    chunks = [c for c in stream(server, STREAM, "null-usage-absent") if c != "[DONE]"]
    assert all("usage" not in chunk for chunk in chunks[:-1]) and chunks[-1]["usage"]


def test_framing_variants(server: LiveServer) -> None:
    body = {**STREAM, "max_tokens": 2}
    crlf = server.post("/v1/completions", body, headers={"X-Mock-Variant": "crlf"}).data
    assert crlf.count(b"\n") == crlf.count(b"\r\n") > 0
    bare = server.post("/v1/completions", body,
                       headers={"X-Mock-Variant": "no-space-after-colon"}).data
    assert bare.startswith(b"data:{") and b"data: " not in bare
    assert bare.endswith(b"data:[DONE]\n\n")
    commented = server.post("/v1/completions", body, headers={"X-Mock-Variant": "comments"})
    assert commented.data.startswith(b": keep-alive\n\n")
    assert commented.chunks()[-1] == "[DONE]"


def test_extra_fields_on_whole_answers_and_their_repeats(server: LiveServer) -> None:
    body = {"model": MODEL, "prompt": "Hello", "max_tokens": 3, "temperature": 0}
    headers = {"X-Mock-Variant": "extra-fields"}
    first = server.post("/v1/completions", body, headers=headers).json()
    repeat = server.post("/v1/completions", body, headers=headers).json()  # a kept answer
    plain = server.post("/v1/completions", body).json()
    for answer in (first, repeat):
        assert answer["choices"][0]["stop_reason"] is None
        assert answer["choices"][0]["text"] == plain["choices"][0]["text"]
    assert "stop_reason" not in plain["choices"][0]  # the cache holds the default rendering


def test_server_variants_apply_to_every_request(make_server: Any) -> None:
    live = make_server(variants=("no-space-after-colon,crlf",))
    data = live.post("/v1/completions", {**STREAM, "max_tokens": 2}).data
    assert data.startswith(b"data:{") and b"\r\n\r\n" in data


def test_an_unknown_variant_is_a_clear_400(server: LiveServer) -> None:
    reply = server.post("/v1/completions", {**STREAM, "max_tokens": 2},
                        headers={"X-Mock-Variant": "crlf,vllm-ish"})
    assert reply.status == 400
    assert reply.error["code"] == "unknown_variant" and "'vllm-ish'" in reply.error["message"]
    # on an invalid request too: the typo is named, not the body's first problem
    reply = server.post("/v1/completions", {"model": MODEL, "max_tokens": -1},
                        headers={"X-Mock-Variant": "vllm-ish"})
    assert reply.status == 400 and reply.error["code"] == "unknown_variant"
    with pytest.raises(UnknownVariantError, match="valid variants: comments"):
        parse_variant_names(["nope"])
    with pytest.raises(ValueError, match="unknown variant 'nope'"):
        MockConfig(variants=("nope",))


def test_the_variant_catalog_is_served(server: LiveServer) -> None:
    entries = server.call("GET", "/mock/variants").json()["data"]
    assert [entry["name"] for entry in entries] == VARIANT_NAMES
    assert all(entry["imitates"] and entry["description"] for entry in entries)


def test_list_variants_names_the_server_each_imitates() -> None:
    listed = subprocess.run([sys.executable, "-m", "mockserver", "--list-variants"],
                            capture_output=True, text=True, check=True, timeout=60).stdout
    rows = [line.split("\t") for line in listed.splitlines()]
    assert [name for name, _ in rows] == VARIANT_NAMES
    assert all(imitates.strip() for _, imitates in rows)
    assert "vLLM" in dict(rows)["finish-on-last-token"]
