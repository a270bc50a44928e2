"""Learn a token's id from the server's own tokenizer endpoint.

``logit_bias`` takes token ids, and the harness knows no server's vocabulary. The first way to
learn some is to echo a token-id prompt (the ``vocab`` probe); a server that refuses token-id
prompts (llama-cpp-python answers 500) often serves its tokenizer beside the API instead, under
one of two names (both at the server's root, not under ``/v1``):

- ``POST /tokenize`` ``{"content": text}`` -> ``{"tokens": [id, ...]}`` and ``POST /detokenize``
  ``{"tokens": [...]}`` -> ``{"content": text}``: llama.cpp's server; vLLM's takes ``prompt``
  (and ``model``) and answers ``prompt``;
  https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md,
  https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html
- ``POST /extras/tokenize`` ``{"input": text}`` -> ``{"tokens": [...]}`` and
  ``POST /extras/detokenize`` ``{"tokens": [...]}`` -> ``{"text": text}``: llama-cpp-python.

One body carries every spelling of the text (``content``, ``prompt``, ``input``), so each route
costs one request to try. The id of the first token a completion generated after ``prompt`` is
where the tokens of ``prompt`` and of ``prompt + text`` part; it is used only if detokenizing it
gives that token's text back, so a ban is never aimed at a guess.
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.wire_json import parse_json
from spec import JSON

from .model import ProbeSession


@dataclass(frozen=True)
class TokenizerRoute:
    """Where a server family serves its tokenizer (paths from the server's root)."""

    name: str
    tokenize: str
    detokenize: str


ROUTES = (
    TokenizerRoute("tokenize", "/tokenize", "/detokenize"),
    TokenizerRoute("extras", "/extras/tokenize", "/extras/detokenize"),
)
TEXT_KEYS = ("content", "prompt", "text")
"""Where a detokenize answer holds the text, by server family."""


@dataclass(frozen=True)
class LearnedId:
    """A token id the server's tokenizer gave (and the token's text as the server's
    detokenizer spells it), or why none could be learned."""

    token_id: int | None
    reason: str = ""
    token: str | None = None


def server_root(s: ProbeSession) -> str:
    """The base URL without the profile's base path (``http://host:port`` for ``.../v1``)."""
    base = s.settings.base_url.rstrip("/")
    base_path = s.settings.profile.base_path.rstrip("/")
    return base[: -len(base_path)] if base_path and base.endswith(base_path) else base


@dataclass(frozen=True)
class TextIds:
    """The ids of a generated text as the server's tokenizer splits it after its prompt (the
    tokenizer route that answered), or why none could be learned.

    These are the ids of the *text*, which a server that generated other ids spelling the same
    text would not have sent: rules judge with them only what the text shows either way."""

    ids: tuple[int, ...] | None
    reason: str = ""
    route: TokenizerRoute | None = None


async def generated_ids(s: ProbeSession, prompt: str, text: str, *, label: str = "") -> TextIds:
    """The ids of ``text`` generated after ``prompt``: where the tokens of ``prompt`` and of
    ``prompt + text`` part, onwards, from the first tokenizer route the server answers (its
    requests recorded as ``LABEL-ROUTE-prompt`` / ``LABEL-ROUTE-completed``, auxiliary)."""
    root = server_root(s)
    prefix = f"{label}-" if label else ""
    tried: list[str] = []
    for route in ROUTES:
        before = await _tokenize(s, f"{prefix}{route.name}-prompt", root + route.tokenize, prompt)
        if before is None:
            tried.append(route.tokenize)
            continue
        after = await _tokenize(s, f"{prefix}{route.name}-completed", root + route.tokenize,
                                prompt + text)
        if after is None:
            return TextIds(None, f"{route.tokenize} tokenized the prompt but not the "
                                 "completed text", route)
        parted = _parting(before, after)
        if parted is None:
            return TextIds(None, f"{route.tokenize}: the completed text adds no token", route)
        return TextIds(tuple(after[parted:]), route=route)
    return TextIds(None, f"no tokenizer endpoint answered ({', '.join(tried)})")


async def first_generated_id(
    s: ProbeSession, prompt: str, text: str, token: str | None
) -> LearnedId:
    """The id of the first token the server generated after ``prompt`` (``text`` is the whole
    completion; ``token`` that token's text when the logprobs gave it, None when they did not:
    then the detokenized id must start ``text``), from the first tokenizer route the server
    answers."""
    found = await generated_ids(s, prompt, text)
    if found.ids is None or found.route is None:
        return LearnedId(None, found.reason)
    route, first = found.route, found.ids[0]
    spelled = await detokenized(s, f"{route.name}-check", route, first)
    if not _spells(spelled, token, text):
        shown = repr(token) if token is not None else f"starting {text[:20]!r}"
        return LearnedId(None, f"{route.tokenize} gives id {first} for the first "
                               f"generated token {shown}, which {route.detokenize} "
                               f"spells {spelled!r}")
    return LearnedId(first, token=spelled)


async def detokenized(s: ProbeSession, key: str, route: TokenizerRoute,
                      token_id: int) -> str | None:
    """The text ``route``'s detokenizer gives one id (None: it did not answer with one)."""
    return await _detokenize(s, key, server_root(s) + route.detokenize, token_id)


def _spells(spelled: str | None, token: str | None, text: str) -> bool:
    """Whether the detokenized id is the first generated token: its text (leading spaces
    aside, which detokenizers drop), or the start of ``text`` when the token is unknown."""
    if spelled is None or not spelled.strip():
        return False
    if token is not None:
        return spelled.strip() == token.strip()
    return text.lstrip().startswith(spelled.strip())


def _parting(before: list[int], after: list[int]) -> int | None:
    """The first position where ``after`` differs from ``before`` (None: it does not)."""
    for index, token_id in enumerate(after):
        if index >= len(before) or before[index] != token_id:
            return index
    return None


async def _tokenize(s: ProbeSession, key: str, url: str, text: str) -> list[int] | None:
    body: JSON = {"model": s.settings.model, "content": text, "prompt": text, "input": text}
    exchange = await s.post_auxiliary(key, url, body)
    tokens = _answer(exchange.status, exchange.body).get("tokens")
    if isinstance(tokens, list) and tokens and all(
        isinstance(t, int) and not isinstance(t, bool) for t in tokens
    ):
        return tokens
    return None


async def _detokenize(s: ProbeSession, key: str, url: str, token_id: int) -> str | None:
    exchange = await s.post_auxiliary(key, url, {"model": s.settings.model,
                                                 "tokens": [token_id]})
    answer = _answer(exchange.status, exchange.body)
    for name in TEXT_KEYS:
        if isinstance(answer.get(name), str):
            return str(answer[name])
    return None


def _answer(status: int | None, body: bytes) -> dict[str, JSON]:
    if status != 200:
        return {}
    try:
        value = parse_json(body)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
