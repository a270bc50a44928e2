"""A small completions server with a word-level vocabulary, on loopback, for the hunt of a
token's id (issue 33): its frequent words have ids below 256, and ids 256 and up decode to
``" t256"``-like pieces, so the ``vocab`` probe's page (ids 256-511) misses every word.

It echoes token-id prompts (``max_tokens: 0``, ``echo``, ``logprobs``), generates the same
words greedily after any prompt, and takes ``logit_bias`` when told to. Told to, it answers
logprobs in the chat shape (``content: [{token, logprob}]``) and serves a tokenizer as
llama.cpp's server does (``POST /tokenize``, ``POST /detokenize``, at the root).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from aiohttp import web

WORDS = ("A", " list", " is", " your", " words", " go", " here", " and", " there", ".",
         " In", " the", " beginning")
"""Ids 0..12; every other id below :data:`SIZE` decodes to ``" t<id>"``."""
SIZE = 1024
CONTINUATION = (" your", " words", " go", " here", " and", " there")
RUNNER_UP = " and"
PIECES = re.compile(r" ?[A-Za-z0-9]+|[^A-Za-z0-9 ]| ")


def piece(token_id: int) -> str:
    return WORDS[token_id] if token_id < len(WORDS) else f" t{token_id}"


def token_id(text: str) -> int:
    if text in WORDS:
        return WORDS.index(text)
    if text.startswith(" t") and text[2:].isdigit() and len(WORDS) <= int(text[2:]) < SIZE:
        return int(text[2:])
    raise ValueError(f"no token for {text!r}")


def tokenize(text: str) -> list[int]:
    return [token_id(p) for p in PIECES.findall(text)]


@dataclass(frozen=True)
class WordServer:
    """How the server behaves: whether it applies ``logit_bias``, answers chat-shaped
    logprobs, serves a tokenizer, takes token-id prompts."""

    honours_bias: bool = True
    chat_logprobs: bool = False
    tokenizer: bool = False
    token_prompts: bool = True

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/v1/models", self.models)
        app.router.add_post("/v1/completions", self.completions)
        if self.tokenizer:
            app.router.add_post("/tokenize", self.tokenize)
            app.router.add_post("/detokenize", self.detokenize)
        return app

    async def models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [
            {"id": "m", "object": "model", "created": 0, "owned_by": "words"}]})

    async def tokenize(self, request: web.Request) -> web.Response:
        body = await request.json()
        try:
            return web.json_response({"tokens": tokenize(str(body.get("content")))})
        except ValueError as exc:
            return web.json_response({"error": str(exc)}, status=400)

    async def detokenize(self, request: web.Request) -> web.Response:
        body = await request.json()
        return web.json_response({"content": "".join(piece(i) for i in body["tokens"])})

    async def completions(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
        except ValueError:
            return self.invalid("the body is not JSON", None)
        prompt = body.get("prompt")
        try:
            if isinstance(prompt, list) and not self.token_prompts:
                raise ValueError("prompt must be a string")
            ids = list(prompt) if isinstance(prompt, list) else tokenize(str(prompt))
            if not all(isinstance(i, int) and 0 <= i < SIZE for i in ids):
                raise ValueError("token id out of range")
        except ValueError as exc:
            return self.invalid(str(exc), "prompt")
        generated = self.generate(int(body.get("max_tokens", 16)), body.get("logit_bias") or {})
        echoed = [piece(i) for i in ids] if body.get("echo") else []
        tokens = echoed + generated
        logprobs = None
        if body.get("logprobs") is not None:
            values = [None if i == 0 and echoed else -0.5 for i in range(len(tokens))]
            logprobs = self.logprobs(tokens, values, (len(echoed) == 0 and str(prompt)) or "")
        text = "".join(tokens)
        return web.json_response({
            "id": "cmpl-words", "object": "text_completion", "created": int(time.time()),
            "model": "m",
            "choices": [{"index": 0, "text": text, "logprobs": logprobs,
                         "finish_reason": "length"}],
            "usage": {"prompt_tokens": len(ids), "completion_tokens": len(generated),
                      "total_tokens": len(ids) + len(generated)},
        })

    @staticmethod
    def invalid(message: str, param: str | None) -> web.Response:
        error = {"message": message, "type": "invalid_request_error", "param": param,
                 "code": None}
        return web.json_response({"error": error}, status=400)

    def generate(self, count: int, bias: dict[str, Any]) -> list[str]:
        """Greedy words: the continuation's next word scores 0, the runner-up -1, the rest
        -10, each plus its bias (when honoured)."""
        out: list[str] = []
        for step in range(count):
            best = CONTINUATION[step % len(CONTINUATION)]

            def score(token: int, best: str = best) -> float:
                text = piece(token)
                base = 0.0 if text == best else -1.0 if text == RUNNER_UP else -10.0
                return base + (float(bias.get(str(token), 0)) if self.honours_bias else 0.0)

            out.append(piece(max(range(SIZE), key=score)))
        return out

    def logprobs(self, tokens: list[str], values: list[float | None], prompt: str) -> Any:
        if self.chat_logprobs:
            return {"content": [{"token": t, "logprob": v if v is not None else 0.0,
                                 "bytes": list(t.encode()), "top_logprobs": []}
                                for t, v in zip(tokens, values, strict=True)]}
        offsets, at = [], len(prompt)
        for token in tokens:
            offsets.append(at)
            at += len(token)
        return {"tokens": tokens, "token_logprobs": values,
                "top_logprobs": [None if v is None else {t: v}
                                 for t, v in zip(tokens, values, strict=True)],
                "text_offset": offsets}


async def start(server: WordServer) -> tuple[web.AppRunner, str]:
    """Serve on 127.0.0.1 (a free port); returns the runner and the ``/v1`` base URL."""
    runner = web.AppRunner(server.app())
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
