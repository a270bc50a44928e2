"""``POST /tokenize`` and ``POST /detokenize``: the model's tokenizer, as llama.cpp serves it.

Not part of the completions contract, but what real servers add beside it (llama.cpp's server:
``{"content": text}`` -> ``{"tokens": [id, ...]}`` and ``{"tokens": [...]}`` ->
``{"content": text}``; vLLM's take ``prompt`` for ``content``), and what a client that must
know token ids (for ``logit_bias``, for token-id prompts) asks. The harness uses it to learn ids
when token-id prompts cannot decode them (``mockserver --fault token-prompt-rejected`` shows
that path). Malformed input gets a 400 envelope naming the field, like every route.
"""

from __future__ import annotations

from aiohttp import web

from .. import sse
from ..errors import ApiError
from .body import parse_json, read_body
from .state import CONFIG, ENGINE

JSON_TYPE = "application/json"
MAX_TEXT_CHARS = 10_000
"""The longest text (and id list) handled, on the event loop: more is a 400, so no request
stalls the others (nobody learns token ids from longer texts)."""


async def tokenize(request: web.Request) -> web.Response:
    body = await _object(request)
    text = body.get("content", body.get("prompt"))
    if not isinstance(text, str):
        raise ApiError(400, "`content` must be a string: the text to tokenize", param="content")
    if len(text) > MAX_TEXT_CHARS:
        raise ApiError(400, f"`content` is longer than {MAX_TEXT_CHARS} characters",
                       param="content")
    try:
        ids = request.app[ENGINE].tokenizer.encode(text)
    except UnicodeEncodeError:
        raise ApiError(400, "`content` holds a lone surrogate, which has no UTF-8 form",
                       param="content") from None
    return web.Response(body=sse.encode_json({"tokens": ids}), content_type=JSON_TYPE)


async def detokenize(request: web.Request) -> web.Response:
    body = await _object(request)
    ids = body.get("tokens")
    tokenizer = request.app[ENGINE].tokenizer
    if not isinstance(ids, list) or not all(tokenizer.is_valid_id(i) for i in ids):
        last = tokenizer.vocab_size - 1
        raise ApiError(400, f"`tokens` must be a list of token ids in 0..{last}", param="tokens")
    if len(ids) > MAX_TEXT_CHARS:
        raise ApiError(400, f"`tokens` holds more than {MAX_TEXT_CHARS} ids", param="tokens")
    text = tokenizer.decode(ids)
    return web.Response(body=sse.encode_json({"content": text}), content_type=JSON_TYPE)


async def _object(request: web.Request) -> dict[str, object]:
    config = request.app[CONFIG]
    raw = await read_body(request, max_bytes=config.max_body_bytes,
                          read_timeout=config.read_timeout)
    body = parse_json(raw, 400)
    if not isinstance(body, dict):
        raise ApiError(400, "the body must be a JSON object", param=None)
    return body
