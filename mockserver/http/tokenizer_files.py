"""``GET /tokenizer/{model}/{file}``: the model's tokenizer as a Hugging Face directory.

Clients that count tokens before they send (lm-eval's loglikelihood tasks, budget gateways,
chunkers) need a tokenizer they can load; ``/v1/models`` names these files in each model's
``tokenizer`` entry, and they are what ``python -m reference_engine.tokenizer export DIR``
writes (``reference_engine.tokenizer.huggingface``), so the ids they give are ``POST
/tokenize``'s. Not part of the completions contract: no API key, no faults, like ``/tokenize``.
The files are built once per tokenizer, off the event loop (about a second: the pre-tokenizer's
classes are read from the whole Unicode range).
"""

from __future__ import annotations

import asyncio
import functools

from aiohttp import web

from reference_engine import CONTEXT_LENGTH
from reference_engine.tokenizer import Tokenizer
from reference_engine.tokenizer.huggingface import FILES, files

from ..errors import ApiError
from .state import ENGINE

ROUTE = "/tokenizer/{model}/{file}"
JSON_TYPE = "application/json"


def file_paths(model: str) -> dict[str, str]:
    """Where each file of ``model``'s tokenizer is served (the ``tokenizer`` entry of
    ``/v1/models``): paths on this server, so they hold behind any proxy that keeps paths."""
    return {name: ROUTE.format(model=model, file=name) for name in FILES}


@functools.lru_cache(maxsize=4)
def _files(tokenizer: Tokenizer) -> dict[str, bytes]:
    return files(tokenizer, context_length=CONTEXT_LENGTH)


async def tokenizer_file(request: web.Request) -> web.Response:
    engine = request.app[ENGINE]
    model, name = request.match_info["model"], request.match_info["file"]
    if model != engine.model_id or name not in FILES:
        raise ApiError(404, f"no tokenizer file {request.path}; this server has "
                       f"{', '.join(file_paths(engine.model_id).values())}",
                       param=None, code="not_found")
    data = (await asyncio.to_thread(_files, engine.tokenizer))[name]
    return web.Response(body=data, content_type=JSON_TYPE, charset="utf-8")
