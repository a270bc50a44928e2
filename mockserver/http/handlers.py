"""The small handlers: ``/v1/models``, the contract documents, health, the fault and variant
catalogs.

The completions handler has its own module (``mockserver.http.completions``).
"""

from __future__ import annotations

from aiohttp import web

import spec
from spec import JSON

from .. import sse
from ..faults import all_faults
from ..variants import all_variants
from .state import CONFIG, ENGINE, REQUEST_STATE
from .tokenizer_files import file_paths

JSON_TYPE = "application/json"


async def models(request: web.Request) -> web.Response:
    """The one model; beside OpenAI's four fields, ``tokenizer`` says where its Hugging Face
    tokenizer files are served (``tokenizer_files``), for clients that count tokens."""
    state = request[REQUEST_STATE]
    model_id = request.app[ENGINE].model_id
    body: JSON = {
        "object": "list",
        "data": [{
            "id": model_id,
            "object": "model",
            "created": request.app[CONFIG].models_created,
            "owned_by": "completions-conformance",
            "tokenizer": {"format": "huggingface", "files": file_paths(model_id)},
        }],
    }
    body = state.faults.alter_response(body, state.ctx)
    return web.Response(body=sse.encode_json(body), content_type=JSON_TYPE)


async def openapi_yaml(request: web.Request) -> web.Response:
    return web.Response(body=spec.document_bytes(), content_type="application/yaml",
                        charset="utf-8")


async def openapi_json(request: web.Request) -> web.Response:
    return web.Response(body=spec.document_json(), content_type=JSON_TYPE)


async def health(request: web.Request) -> web.Response:
    engine = request.app[ENGINE]
    body = {"status": "ok", "model": engine.model_id, "system_fingerprint": engine.fingerprint}
    return web.Response(body=sse.encode_json(body), content_type=JSON_TYPE)


async def fault_catalog(request: web.Request) -> web.Response:
    body = {"object": "list", "data": [fault.describe() for fault in all_faults()]}
    return web.Response(body=sse.encode_json(body), content_type=JSON_TYPE)


async def variant_catalog(request: web.Request) -> web.Response:
    """The valid rendering variants, as ``--list-variants`` prints them, with descriptions."""
    body = {"object": "list", "data": [variant.describe() for variant in all_variants()]}
    return web.Response(body=sse.encode_json(body), content_type=JSON_TYPE)
