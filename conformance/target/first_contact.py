"""The first contact with a target: one request, and the model found.

Before the catalog sends its ~60 requests, one ``GET <base URL>/models`` (the profile's model
listing, or the same path as a plain reachability test for a profile without one) says whether
the run can mean anything. A target that cannot be reached, refuses the API key (401 / 403) or
stays rate-limited through the retries stops the run here with one line and exit status 2
(:mod:`conformance.target.diagnosis`), never with verdicts. A base URL that misses ``/v1`` (its
``/models`` is 404 where ``/v1/models`` answers) is a usage error saying which URL was meant
(one that names the operation itself, ``.../v1/completions``, is found before anything is
sent: :func:`conformance.target.checks.check_base_url`).

The request goes through :class:`~conformance.client.Client` like every other (the run's
headers, limits and retries), with a budget of its own: it never eats ``--max-requests``.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

from conformance.client import Client
from conformance.errors import HarnessError, UsageError
from conformance.run.settings import Settings, join_url
from conformance.target.options import TargetOptions
from conformance.transport import Exchange, open_session
from conformance.wire_json import parse_json

from . import diagnosis


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
