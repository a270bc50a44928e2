"""The completions handler: ``POST /v1/completions`` and ``POST /dedicated/v1/completions``.

One handler serves both routes; the route says which wire applies. It runs three
stages, one module each: :mod:`.intake` (read, validate, faults, and the one decision of how
the answer is produced), :mod:`.generate` (the result cache, the engine, work off the loop)
and :mod:`.respond` (render and write). Parse, call the engine, serialise.
"""

from __future__ import annotations

from aiohttp import web

from reference_engine.errors import InvalidRequestError

from . import generate, intake, respond
from .state import REQUEST_STATE, validator


async def completions(request: web.Request) -> web.StreamResponse:
    plan = await intake.take(request)
    if not isinstance(plan, intake.Plan):  # a kept answer to the same body bytes
        return await respond.kept(request, plan)
    try:
        if plan.how == "stream":
            return await respond.stream(request, plan, await generate.events(request, plan))
        return await respond.whole(request, plan, await generate.whole(request, plan))
    except InvalidRequestError as engine_error:
        checker = validator(request.app, request[REQUEST_STATE].route)
        raise checker.engine_error(engine_error) from None
