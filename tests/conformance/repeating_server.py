"""A small completions server whose greedy answer repeats late, on loopback (issue 50).

Like llama.cpp's C++ server it answers ``logprobs: 0`` with no logprobs object at all and serves
its tokenizer at the root (``POST /tokenize`` ``{"content"}`` -> ``{"tokens"}``, ``POST
/detokenize``), so the ids of an answer come only from its text. Its greedy answer to any prompt
is :data:`OPENING`'s first ``distinct`` words, then " water since came take" over and over: with
12 distinct words its 16 tokens say the loop once and repeat none (the issue's server), with 8
they repeat it. Told to, it repeats only after a prompt that repeats a phrase (else its words
never repeat), and it ignores ``presence_penalty`` / ``frequency_penalty`` / ``logit_bias``.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from aiohttp import web

LOOP = (" water", " since", " came", " take")
RUNNER_UP = " and"
OPENING = tuple(f" w{n}" for n in range(200))
"""Distinct words; the answer never repeats while it takes them."""
WORDS = (*LOOP, RUNNER_UP, " the", *OPENING)
"""Ids 256 on; ids 0..255 are single characters (Latin-1)."""
PIECES = re.compile(r" ?[A-Za-z][A-Za-z0-9]*|.", re.DOTALL)


def piece(token_id: int) -> str:
    return chr(token_id) if token_id < 256 else WORDS[token_id - 256]


def tokenize(text: str) -> list[int]:
    """Words of :data:`WORDS` as one id each, every other character as its own."""
    ids: list[int] = []
    for part in PIECES.findall(text):
        if part in WORDS:
            ids.append(256 + WORDS.index(part))
        else:
            ids.extend(ord(c) if ord(c) < 256 else ord("?") for c in part)
    return ids


VOCAB = range(256 + len(WORDS))


def _has_repeated_phrase(prompt: str) -> bool:
    words = prompt.replace(",", " ").split()
    return len(words) != len(set(words))


@dataclass(frozen=True)
class RepeatingServer:
    """``distinct``: how many words the greedy answer says before it loops; ``phrase_only``:
    it loops only after a prompt that repeats a phrase; ``honours``: whether it applies the
    penalties and logit_bias."""

    distinct: int = 20
    phrase_only: bool = False
    honours: bool = True

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/v1/models", self.models)
        app.router.add_post("/v1/completions", self.completions)
        app.router.add_post("/tokenize", self.tokenize)
        app.router.add_post("/detokenize", self.detokenize)
        return app

    async def models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [
            {"id": "m", "object": "model", "created": 0, "owned_by": "repeats"}]})

    async def tokenize(self, request: web.Request) -> web.Response:
        body = await request.json()
        return web.json_response({"tokens": tokenize(str(body.get("content")))})

    async def detokenize(self, request: web.Request) -> web.Response:
        body = await request.json()
        ids = body.get("tokens")
        if not isinstance(ids, list) or not all(isinstance(i, int) and i in VOCAB for i in ids):
            return web.json_response({"error": "bad tokens"}, status=400)
        return web.json_response({"content": "".join(piece(i) for i in ids)})

    def schedule(self, prompt: str) -> list[str]:
        """The greedy words, in order, before any bias or penalty."""
        loops = not self.phrase_only or _has_repeated_phrase(prompt)
        opening = list(OPENING[:self.distinct] if loops else OPENING)
        return opening + list(LOOP) * 64 if loops else opening

    async def completions(self, request: web.Request) -> web.Response:
        body = await request.json()
        prompt = body.get("prompt")
        if isinstance(prompt, list):
            if not all(isinstance(i, int) and i in VOCAB for i in prompt):
                return web.json_response({"error": {"message": "bad prompt", "type":
                                          "invalid_request_error", "param": "prompt",
                                          "code": None}}, status=400)
            prompt = "".join(piece(i) for i in prompt)
        prompt = str(prompt)
        count = int(body.get("max_tokens", 16))
        generated = self.generate(prompt, count, body)
        text = (prompt if body.get("echo") else "") + "".join(generated)
        prompt_tokens = len(tokenize(prompt))
        return web.json_response({
            "id": "cmpl-repeats", "object": "text_completion", "created": int(time.time()),
            "model": "m",
            "choices": [{"index": 0, "text": text, "finish_reason": "length"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(generated),
                      "total_tokens": prompt_tokens + len(generated)},
        })

    def generate(self, prompt: str, count: int, body: dict[str, Any]) -> list[str]:
        """Greedy: the scheduled word scores 0, the runner-up -1, the rest -10; then the bias,
        and the penalties on words already said (when honoured)."""
        bias = (body.get("logit_bias") or {}) if self.honours else {}
        presence = float(body.get("presence_penalty") or 0) if self.honours else 0.0
        frequency = float(body.get("frequency_penalty") or 0) if self.honours else 0.0
        schedule = self.schedule(prompt)
        out: list[int] = []
        for step in range(count):
            best = schedule[step] if step < len(schedule) else RUNNER_UP
            said = Counter(out)

            def score(token: int, best: str = best, said: Counter[int] = said) -> float:
                text = piece(token)
                base = 0.0 if text == best else -1.0 if text == RUNNER_UP else -10.0
                base += float(bias.get(str(token), 0))
                if said[token]:
                    base -= presence + frequency * said[token]
                return base

            out.append(max(VOCAB, key=score))
        return [piece(i) for i in out]


async def start(server: RepeatingServer) -> tuple[web.AppRunner, str]:
    """Serve on 127.0.0.1 (a free port); returns the runner and the ``/v1`` base URL."""
    runner = web.AppRunner(server.app())
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
