"""The application factory: ``create_app(config) -> web.Application``.

Routes (spec: ``paths`` of ``spec/completions.yaml``)::

    POST /v1/completions             OpenAI completions (invalid input: 400)
    POST /dedicated/v1/completions   FriendliAI completions (invalid input: 422)
    GET  /v1/models                  {"object": "list", "data": [...]}
    GET  /openapi.yaml, /openapi.json  the contract, exactly as validated against
    GET  /health                     liveness (no key needed)
    GET  /mock/faults                the fault catalog
    GET  /mock/variants              the valid rendering variants
    GET  /tokenizer/{model}/{file}   the tokenizer as a Hugging Face directory's files
    POST/GET a --profile's own paths   its completions and models (``mockserver.contracts``)

State lives in typed ``web.AppKey`` entries (``mockserver.http.state``); the engine is loaded
at start-up, not on the first request.
"""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator

from aiohttp import web

from reference_engine import Engine

from .config import MockConfig
from .contracts import route_table
from .faults import ActiveFaults, Chaos, parse_fault_names
from .http import completions, handlers, tokenize, tokenizer_files
from .http.cache import ResultCache
from .http.engine_threads import Offload
from .http.latency import Latency
from .http.middleware import errors, gate, rate_limit_headers
from .http.ratelimit import RateLimiter
from .http.state import (
    CACHE,
    CHAOS,
    CONFIG,
    ENGINE,
    FAULT_MEMORY,
    LATENCY,
    LIMITER,
    OFFLOAD,
    ROUTES,
    SERVER_FAULTS,
    VALIDATORS,
    Route,
)
from .validation import RequestValidator


def create_app(
    config: MockConfig | None = None, *, engine: Engine | None = None
) -> web.Application:
    """A ready-to-run mock for ``config`` (defaults: no keys, no faults, no latency, no limits).

    ``engine`` lets tests share one loaded engine between apps.
    """
    config = config or MockConfig()
    app = web.Application(
        middlewares=[errors, gate],
        client_max_size=config.max_body_bytes,
    )
    engine = engine or Engine()
    app[CONFIG] = config
    app[ENGINE] = engine
    contracts = config.contracts()
    app[VALIDATORS] = {
        contract.name: RequestValidator(contract, model_id=engine.model_id)
        for contract in contracts
    }
    table = route_table(contracts)
    app[ROUTES] = {path: Route(operation, contract.wire, contract.name)
                   for path, (operation, contract) in table.items()}
    app[SERVER_FAULTS] = ActiveFaults(parse_fault_names(config.faults))
    app[CHAOS] = Chaos(
        every=config.chaos_every,
        probability=config.chaos_probability,
        seed=config.chaos_seed,
        pool=parse_fault_names(config.chaos_faults),
    )
    app[CACHE] = ResultCache(config.cache_entries)
    app[FAULT_MEMORY] = {}
    app[LATENCY] = Latency(ttft_ms=config.ttft_ms, itl_ms=config.itl_ms,
                           jitter_ms=config.jitter_ms, seed=config.latency_seed)
    if config.rate_limits_enabled:
        app[LIMITER] = RateLimiter(rpm=config.rate_limit_rpm, tpm=config.rate_limit_tpm)
        app.on_response_prepare.append(rate_limit_headers)
    app[OFFLOAD] = Offload()
    app.cleanup_ctx.append(_loaded_engine)
    app.on_shutdown.append(_stop_engine_work)
    app.add_routes([
        web.post(path, completions.completions) if operation == "completions"
        else web.get(path, handlers.models)
        for path, (operation, _) in table.items()
    ])
    app.add_routes([
        web.get("/openapi.yaml", handlers.openapi_yaml),
        web.get("/openapi.json", handlers.openapi_json),
        web.get("/health", handlers.health),
        web.get("/mock/faults", handlers.fault_catalog),
        web.get("/mock/variants", handlers.variant_catalog),
        web.post("/tokenize", tokenize.tokenize),
        web.post("/detokenize", tokenize.detokenize),
        web.get(tokenizer_files.ROUTE, tokenizer_files.tokenizer_file),
    ])
    return app


async def _loaded_engine(app: web.Application) -> AsyncIterator[None]:
    app[ENGINE].load()
    # The engine's tables and the tokenizer are long-lived: keep them out of the collector's
    # generations so that collections during requests stay short (p99 latency).
    gc.collect()
    gc.freeze()
    yield


async def _stop_engine_work(app: web.Application) -> None:
    """On shutdown (before aiohttp waits for requests in flight): stop every engine job, so a
    request of 100,000 prompts does not hold SIGTERM up; its answer is a 503."""
    app[OFFLOAD].close()
