"""Typed application and request state (``web.AppKey`` / ``web.RequestKey``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from aiohttp import web

from reference_engine import Engine

from ..config import MockConfig
from ..contracts import Operation
from ..faults import ActiveFaults, Chaos, Fault, FaultContext
from ..validation import RequestValidator
from ..variants import ActiveVariants
from ..wire.formats import Wire
from .cache import ResultCache
from .engine_threads import Offload
from .latency import Latency
from .ratelimit import Admission, RateLimiter


@dataclass(frozen=True)
class Route:
    """What the middleware needs to know of an API route."""

    operation: Operation
    wire: Wire
    contract: str = ""
    """The served contract's name (``mockserver.contracts``); empty: the wire's built-in."""


@dataclass
class RequestState:
    """Per-request state shared by the middleware and the handlers."""

    route: Route
    faults: ActiveFaults
    ctx: FaultContext
    admission: Admission | None = None
    chaos_ticket: int | None = None
    engine_seconds: float = 0.0
    """Time spent waiting for this request's jobs on the engine's threads (its budget)."""
    notes: dict[str, str] = field(default_factory=dict)
    variants: ActiveVariants = field(default_factory=ActiveVariants)
    """The rendering variants asked for (``--variant``, then ``X-Mock-Variant``)."""

    def add_fault(self, fault: Fault | None) -> None:
        self.faults = self.faults.with_fault(fault)


CONFIG = web.AppKey("config", MockConfig)
ENGINE = web.AppKey("engine", Engine)
VALIDATORS = web.AppKey("validators", dict)  # contract name -> RequestValidator
ROUTES = web.AppKey("routes", dict)  # path -> Route: the API routes the gate admits
SERVER_FAULTS = web.AppKey("server_faults", ActiveFaults)
CHAOS = web.AppKey("chaos", Chaos)
FAULT_MEMORY = web.AppKey("fault_memory", dict)  # FaultContext.memory: faults spanning requests
LATENCY = web.AppKey("latency", Latency)
LIMITER = web.AppKey("limiter", RateLimiter)
CACHE = web.AppKey("cache", ResultCache)
OFFLOAD = web.AppKey("offload", Offload)
REQUEST_STATE = web.RequestKey("mock_state", RequestState)


def validator(app: web.Application, route: Route) -> RequestValidator:
    validators: dict[str, RequestValidator] = app[VALIDATORS]
    return validators[route.contract or route.wire]
