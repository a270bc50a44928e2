"""The two middlewares: ``errors`` builds every error answer; ``gate`` admits API requests.

``errors`` is the outermost layer and the only place an error envelope is built (spec:
``ErrorResponse``, ``{"error": {"message", "type", "param", "code"}}``): it turns
:class:`ApiError`, aiohttp's own HTTP errors (404 unknown path, 405 wrong method, 413) and, as a
last resort, any unexpected exception (500, logged) into that envelope (a client that
left mid-body is no error: logged at INFO, nothing sent), then lets ``error``
faults bend it. ``gate`` runs on the API routes only (``/v1/completions``,
``/dedicated/v1/completions``, ``/v1/models`` and a ``--profile``'s paths: ``app[ROUTES]``):
it resolves the request's faults and rendering variants (an unknown name in ``X-Mock-Fault`` or
``X-Mock-Variant`` is a 400 before the body is even read, so a typo is never mistaken for a
validation error), checks the API key and takes the rate limits, in that order.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web

from .. import sse
from ..errors import ApiError, server_error
from ..faults import ActiveFaults, ErrorReply, FaultContext, UnknownFaultError, parse_fault_names
from ..logs import CLIENT_GONE_STATUS
from ..variants import ActiveVariants, UnknownVariantError, parse_variant_names
from .state import (
    CONFIG,
    FAULT_MEMORY,
    LIMITER,
    REQUEST_STATE,
    ROUTES,
    SERVER_FAULTS,
    RequestState,
)

log = logging.getLogger("mockserver")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
FAULT_HEADER = "X-Mock-Fault"
VARIANT_HEADER = "X-Mock-Variant"


@web.middleware
async def errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every error answer: the envelope, its status and headers, bent by ``error`` faults."""
    try:
        return await handler(request)
    except ApiError as error:
        return error_response(request, error)
    except web.HTTPException as error:
        if error.status < 400:
            raise
        return error_response(request, _from_http_exception(request, error))
    except asyncio.CancelledError:
        raise
    except ConnectionError as gone:  # the client left mid-body: nobody to answer, no bug
        log.info("client went away during %s %s: %s", request.method, request.path,
                 gone or type(gone).__name__)
        return web.Response(status=CLIENT_GONE_STATUS)
    except Exception:
        log.exception("unexpected error answering %s %s", request.method, request.path)
        return error_response(request, server_error())


def error_response(request: web.Request, error: ApiError) -> web.Response:
    """The envelope for ``error`` (after the request's ``error`` faults)."""
    reply = ErrorReply(
        error.status, "application/json", sse.encode_json(error.envelope()), error.headers, error
    )
    state = request.get(REQUEST_STATE)
    if state is not None:
        reply = state.faults.alter_error(reply, state.ctx)
    headers = {**reply.headers, "Content-Type": reply.content_type}
    return web.Response(status=reply.status, body=reply.body, headers=headers)


def _from_http_exception(request: web.Request, error: web.HTTPException) -> ApiError:
    if isinstance(error, web.HTTPMethodNotAllowed):
        allowed = ", ".join(sorted(error.allowed_methods))
        return ApiError(
            405,
            f"Method {request.method} is not allowed on {request.path}; use {allowed}.",
            code="method_not_allowed",
            headers={"Allow": allowed},
        )
    if isinstance(error, web.HTTPNotFound):
        return ApiError(
            404,
            f"No route {request.method} {request.path}. Routes: POST /v1/completions, "
            "POST /dedicated/v1/completions, GET /v1/models, GET /openapi.yaml, GET /health.",
            code="not_found",
        )
    if isinstance(error, web.HTTPRequestEntityTooLarge):
        return ApiError(413, "The request body is too large.", code="request_too_large")
    return ApiError(error.status, error.reason or "HTTP error", code=None)


@web.middleware
async def gate(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Faults, then authentication, then rate limits, for the API routes."""
    resource = request.match_info.route.resource
    route = request.app[ROUTES].get(resource.canonical) if resource is not None else None
    if route is None or request.method not in ("GET", "POST", "HEAD"):
        return await handler(request)
    app = request.app
    state = RequestState(
        route=route,
        faults=app[SERVER_FAULTS],
        ctx=FaultContext(wire=route.wire, operation=route.operation,
                         client_gone=lambda: _client_gone(request), memory=app[FAULT_MEMORY]),
    )
    request[REQUEST_STATE] = state
    header = request.headers.get(FAULT_HEADER)
    if header:
        try:
            state.faults = ActiveFaults((*state.faults.faults, *parse_fault_names([header])))
        except UnknownFaultError as error:
            raise ApiError(400, str(error), param=None, code="unknown_fault") from None
    state.variants = _variants(request)
    key = _check_api_key(request)
    limiter = app.get(LIMITER)
    if limiter is not None:  # an unconfigured token is no identity: anyone can mint one
        state.admission = limiter.admit(f"key:{key}" if key else f"client:{request.remote}")
    return await handler(request)


def _variants(request: web.Request) -> ActiveVariants:
    """The server's variants (``--variant``), then the header's; an unknown name in the
    header is a 400 (``unknown_variant``), as an unknown fault is."""
    names = request.app[CONFIG].variants
    header = request.headers.get(VARIANT_HEADER)
    if not names and not header:
        return ActiveVariants()
    try:
        return ActiveVariants(parse_variant_names((*names, header or "")))
    except UnknownVariantError as error:
        raise ApiError(400, str(error), param=None, code="unknown_variant") from None


def _bearer_token(request: web.Request) -> str | None:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def _check_api_key(request: web.Request) -> str | None:
    """The caller's key if keys are configured; 401 when it is missing or wrong."""
    keys = request.app[CONFIG].api_keys
    if not keys:
        return None
    token = _bearer_token(request) or ""
    # compare_digest against every key, so the time taken does not tell which key was close.
    valid = False
    for key in keys:
        valid |= hmac.compare_digest(
            token.encode("utf-8", "surrogateescape"), key.encode("utf-8", "surrogateescape")
        )
    if not token or not valid:
        raise ApiError(
            401,
            "Missing or invalid API key: send `Authorization: Bearer <key>` with one of the keys "
            "the mock was started with (--api-key or MOCKSERVER_API_KEYS).",
            code="invalid_api_key",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return token


def _client_gone(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()


async def rate_limit_headers(request: web.Request, response: web.StreamResponse) -> None:
    """``on_response_prepare``: ``x-ratelimit-*`` headers on every admitted or refused answer."""
    state = request.get(REQUEST_STATE)
    if state is not None and state.admission is not None:
        for name, value in state.admission.headers().items():
            response.headers.setdefault(name, value)
