"""From command-line values to :class:`~conformance.settings.Settings`.

Everything the user can get wrong is checked here, with a message naming the flag and the
value (:class:`UsageError`, exit status 2): an unknown profile or feature, a header without a
colon, a FriendliAI run without ``--model``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from urllib.parse import urlsplit

import spec
from conformance.transport import Exchange, Limits, open_session, record

from .settings import Settings, default_limits, join_url


class UsageError(Exception):
    """A flag or environment value the run cannot use (exit status 2)."""


class HarnessError(Exception):
    """The run could not start: the mock did not come up, the target was unreachable
    (exit status 2)."""


API_KEY_VARIABLES = ("CONFORMANCE_API_KEY", "OPENAI_API_KEY")


def split_list(values: Iterable[str]) -> list[str]:
    """Repeatable flags that also take comma-separated values: ``-s A -s B,C``."""
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def parse_headers(values: Iterable[str]) -> tuple[tuple[str, str], ...]:
    headers = []
    for value in values:
        name, colon, content = value.partition(":")
        if not colon or not name.strip() or any(c in name for c in " \t"):
            raise UsageError(f"--header expects 'Name: value', got {value.split(':')[0]!r}...")
        headers.append((name.strip(), content.strip()))
    return tuple(headers)


def pick_profile(explicit: str | None, base_url: str | None) -> spec.Profile:
    name = explicit
    if name is None:
        path = urlsplit(base_url).path.rstrip("/") if base_url else ""
        name = "friendli" if path.endswith("/dedicated/v1") else "openai"
    try:
        return spec.get_profile(name)
    except KeyError:
        raise UsageError(
            f"--profile {name!r} is unknown; choose one of {', '.join(spec.profile_names())}"
        ) from None


def pick_features(
    profile: spec.Profile, add: Iterable[str], remove: Iterable[str]
) -> frozenset[str]:
    known = set(spec.all_features())
    added, removed = split_list(add), split_list(remove)
    unknown = sorted(set(added + removed) - known)
    if unknown:
        raise UsageError(
            f"unknown feature(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    return (profile.features | set(added)) - set(removed)


def pick_api_key(explicit: str | None, environ: Mapping[str, str], *, embedded: bool) -> str | None:
    """``--api-key``, else ``CONFORMANCE_API_KEY`` / ``OPENAI_API_KEY`` (not for the embedded
    mock: a key from the environment is never sent to a process the harness started)."""
    if explicit:
        return explicit
    if embedded:
        return None
    for name in API_KEY_VARIABLES:
        if environ.get(name):
            return environ[name]
    return None


async def discover_model(
    base_url: str,
    *,
    api_key: str | None,
    headers: tuple[tuple[str, str], ...],
    limits: Limits,
    on_exchange: Callable[[Exchange], None] | None = None,
) -> str:
    """The first model ``GET <base_url>/models`` lists (``{"data": [...]}`` or a bare list).

    ``on_exchange`` receives the recorded request, so a report can keep it (a replay of the
    report must answer the discovery too)."""
    items = list(headers)
    if api_key:
        items.insert(0, ("Authorization", f"Bearer {api_key}"))
    url = join_url(base_url, "/v1/models", "/v1")
    async with open_session() as session:
        exchange = await record(
            session, "GET", url, headers=items, limits=limits,
            secret_headers=[name for name, _ in headers],
        )
    if on_exchange is not None:
        on_exchange(exchange)
    if exchange.status is None:
        raise HarnessError(f"cannot reach {exchange.request.url}: {exchange.error}")
    try:
        body = json.loads(exchange.body)
    except ValueError:
        body = None
    data = body.get("data") if isinstance(body, dict) else body
    if exchange.status == 200 and isinstance(data, list):
        for model in data:
            if isinstance(model, dict) and isinstance(model.get("id"), str) and model["id"]:
                return str(model["id"])
    raise UsageError(
        f"could not find a model in GET {exchange.request.url} (HTTP {exchange.status}); "
        "pass --model"
    )


def build_settings(
    *,
    base_url: str,
    profile: spec.Profile,
    model: str,
    features: frozenset[str],
    api_key: str | None,
    headers: tuple[tuple[str, str], ...],
    max_tokens: int,
    concurrency: int,
    max_requests: int | None,
    timeout: float,
) -> Settings:
    if timeout <= 0:
        raise UsageError(f"--timeout must be positive, got {timeout}")
    limits = default_limits(timeout)
    try:
        return Settings(
            base_url=base_url, profile=profile, model=model, features=features,
            api_key=api_key, headers=headers, max_tokens=max_tokens,
            concurrency=concurrency, max_requests=max_requests, limits=limits,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
