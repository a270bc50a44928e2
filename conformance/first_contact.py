"""The first contact with a target: the URL checked, one request, and the model found.

Before the catalog sends its ~60 requests, one ``GET <base URL>/models`` (the profile's model
listing, or the same path as a plain reachability test for a profile without one) says whether
the run can mean anything. A target that cannot be reached, refuses the API key (401 / 403) or
stays rate-limited through the retries stops the run here with one line and exit status 2
(:mod:`conformance.diagnosis`), never with verdicts. A base URL that misses ``/v1`` (its
``/models`` is 404 where ``/v1/models`` answers) or that names the operation itself
(``.../v1/completions``) is a usage error saying which URL was meant.

The request goes through :class:`~conformance.client.Client` like every other (the run's
headers, limits and retries), with a budget of its own: it never eats ``--max-requests``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import urlsplit

import spec
from conformance.client import Client
from conformance.transport import Exchange, open_session
from conformance.wire_json import parse_json

from . import diagnosis
from .errors import HarnessError, UsageError
from .settings import Settings, join_url
from .target_options import TargetOptions

OPERATION_TAILS = ("/chat/completions", "/completions", "/models")
"""Paths an OpenAI client appends to the base URL: a base URL ending in one names an
operation, not the API root."""
HOST_LIKE = re.compile(r"^(localhost|[\w.-]+\.[\w-]+|\[[0-9a-fA-F:]+\]|[\w.-]+:\d+)(:\d+)?(/|$)")
"""The start of a URL given without its scheme: ``127.0.0.1:8000/v1``, ``api.example.com``."""


def check_base_url(url: str, profile: spec.Profile, options: TargetOptions) -> None:
    """Usage errors of the base URL itself, before anything is sent."""
    flag = options.flag("base-url")
    parts = urlsplit(url)
    if "://" not in url:
        if HOST_LIKE.match(url):
            raise UsageError(f"{flag} {url!r} has no scheme: did you mean {flag} http://{url}?")
        raise UsageError(f"{flag} {url!r} is not a URL: give the scheme and host, as in "
                         f"{flag} http://127.0.0.1:8000{profile.base_path}")
    if parts.scheme not in ("http", "https"):
        raise UsageError(f"{flag} {url!r}: the scheme must be http:// or https://, not "
                         f"{parts.scheme}://")
    try:
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError as exc:
        raise UsageError(f"{flag} {url!r}: {exc}") from None
    if not parts.hostname:
        raise UsageError(f"{flag} {url!r} has no host: as in {flag} "
                         f"http://127.0.0.1:8000{profile.base_path}")
    path = parts.path.rstrip("/")
    for tail in OPERATION_TAILS:
        if path.endswith(tail):
            root = url.rstrip("/")[: -len(tail)]
            raise UsageError(f"{flag} ends in {tail}, an operation: give the API root as an "
                             f"OpenAI client takes it: {flag} {root}")


async def first_contact(
    settings: Settings,
    options: TargetOptions,
    *,
    discover: bool,
    listing: str | None = None,
    on_exchange: Callable[[Exchange], None] | None = None,
) -> str | None:
    """Send the first request; raise :class:`HarnessError` / :class:`UsageError` when the run
    cannot mean anything. With ``discover``, return the first model the listing gives.

    ``listing`` is the URL to ask (default: the settings' model listing); ``on_exchange``
    receives a discovery's exchange, so a report keeps it (its replay must answer it too)."""
    url = listing or settings.models_url
    exchange = await _get(settings, url)
    if exchange.status is None:
        raise HarnessError(diagnosis.unreachable(exchange, settings.base_url, settings.network,
                                                 options))
    if exchange.status in (401, 403):
        raise HarnessError(diagnosis.key_refused(exchange, options,
                                                 key_sent=bool(settings.api_key)))
    if exchange.status in (429, 503):
        raise HarnessError(diagnosis.still_refused(exchange, options, settings.retries))
    if exchange.status == 404 and listing is None:
        await _suggest_base_path(settings, options)
    if not discover:
        return None
    if on_exchange is not None:
        on_exchange(exchange)
    model = _first_model(exchange)
    if model is None:
        raise UsageError(f"could not find a model in GET {exchange.request.url} (HTTP "
                         f"{exchange.status}): pass {options.flag('model')}")
    return model


async def _get(settings: Settings, url: str) -> Exchange:
    async with open_session() as session:
        return await Client(settings, session).send("GET", url)


async def _suggest_base_path(settings: Settings, options: TargetOptions) -> None:
    """A 404 on ``<base URL>/models``: when the base URL lacks the profile's base path and
    ``<base URL><base path>/models`` answers, the user meant that base URL."""
    base_path = settings.profile.base_path
    path = urlsplit(settings.base_url).path.rstrip("/")
    if path.endswith(base_path):
        return
    meant = settings.base_url.rstrip("/") + base_path
    path_of_models = settings.profile.models_path or f"{base_path}/models"
    exchange = await _get(settings, join_url(meant, path_of_models, base_path))
    if exchange.status is not None and exchange.status != 404:
        flag = options.flag("base-url")
        raise UsageError(f"GET {settings.models_url} answered 404, but {meant}"
                         f"{path_of_models[len(base_path):]} answers HTTP {exchange.status}: "
                         f"did you mean {flag} {meant}?")


def _first_model(exchange: Exchange) -> str | None:
    """The first model id of a listing (``{"data": [...]}`` or a bare list)."""
    if exchange.status != 200:
        return None
    try:
        body = parse_json(exchange.body)
    except ValueError:
        return None
    data = body.get("data") if isinstance(body, dict) else body
    if isinstance(data, list):
        for model in data:
            if isinstance(model, dict) and isinstance(model.get("id"), str) and model["id"]:
                return str(model["id"])
    return None
