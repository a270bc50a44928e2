"""logit_bias is aimed on any vocabulary (issue 33): a word-level one whose words the ``vocab``
probe's page misses (further pages are decoded by echo), and a server whose logprobs come in the
chat shape (the id comes from its tokenizer endpoint). A server that ignores ``logit_bias``
fails PARAMS-002 / 003 on both; one that honours it passes them."""

from __future__ import annotations

import asyncio

import pytest
from harness_support import settings_for
from word_vocab_server import WordServer, start

from conformance.model import RunResult
from conformance.rules import CATALOG
from conformance.run.runner import execute

RULES = ("PARAMS-002", "PARAMS-003")


def run(server: WordServer) -> RunResult:
    async def main() -> RunResult:
        runner, url = await start(server)
        try:
            settings = settings_for(url, "openai")
            rules = CATALOG.select(profile=settings.profile, select=list(RULES))
            return await execute(settings, rules)
        finally:
            await runner.cleanup()

    return asyncio.run(main())


def verdicts(result: RunResult) -> dict[str, str]:
    return {r.rule.id: f"{r.verdict.value}: {r.message}" for r in result.results}


@pytest.mark.parametrize("chat", [False, True], ids=["word-level", "chat-shaped"])
def test_a_server_honouring_logit_bias_passes(chat: bool) -> None:
    result = run(WordServer(honours_bias=True, chat_logprobs=chat, tokenizer=chat))
    assert verdicts(result) == {rule: "PASS: " for rule in RULES}


@pytest.mark.parametrize("chat", [False, True], ids=["word-level", "chat-shaped"])
def test_a_server_ignoring_logit_bias_fails(chat: bool) -> None:
    result = run(WordServer(honours_bias=False, chat_logprobs=chat, tokenizer=chat))
    assert {r.rule.id: r.verdict.value for r in result.results} == dict.fromkeys(RULES, "FAIL")


def test_the_word_level_ids_come_from_a_further_page_without_a_tokenizer() -> None:
    result = run(WordServer(honours_bias=False))
    labels = set(result.exchanges)
    assert "logit-bias/decode-0" in labels, sorted(labels)
    assert not any("tokenize" in label for label in labels), sorted(labels)
    assert not any(label.startswith("logit-bias/decode-512") for label in labels)


def test_a_skip_says_what_was_tried() -> None:
    result = run(WordServer(token_prompts=False))
    ban = next(r for r in result.results if r.rule.id == "PARAMS-002")
    assert ban.verdict.value == "SKIP"
    assert "' your'" in ban.message and "no ids were decoded" in ban.message, ban.message
    assert "no tokenizer endpoint answered (/tokenize, /extras/tokenize)" in ban.message
