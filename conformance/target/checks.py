"""The checks of the target options that need neither the network nor the environment.

Everything the user can get wrong on the command line is found here, before a mock is started
or a request sent, with a message naming the flag as the front end spells it (``--profile``,
or ``--conformance-profile`` under pytest) and the value (:class:`UsageError`, exit status 2):
an unknown profile or feature, a header without a colon, a count out of range, a base URL that
is not one, a FriendliAI run without ``--model``. :func:`conformance.target.resolved.
resolve_target` runs them in this order and keeps what they return.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

import yaml

import spec
from conformance.errors import UsageError
from conformance.target.options import TargetOptions

DEFAULT_PROFILE = "openai"
MIN_MAX_TOKENS = 4
"""The probes need room for a few tokens (a stop string, a length cut shorter than greedy)."""
OPERATION_TAILS = ("/chat/completions", "/completions", "/models")
"""Paths an OpenAI client appends to the base URL: a base URL ending in one names an
operation, not the API root."""
HOST_LIKE = re.compile(r"^(localhost|[\w.-]+\.[\w-]+|\[[0-9a-fA-F:]+\]|[\w.-]+:\d+)(:\d+)?(/|$)")
"""The start of a URL given without its scheme: ``127.0.0.1:8000/v1``, ``api.example.com``."""


def split_list(values: Iterable[str]) -> list[str]:
    """Repeatable flags that also take comma-separated values: ``-s A -s B,C``."""
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def parse_headers(
    values: Iterable[str], *, flag: str = "--header"
) -> tuple[tuple[str, str], ...]:
    headers = []
    for value in values:
        name, colon, content = value.partition(":")
        if not colon or not name.strip() or any(c in name for c in " \t"):
            raise UsageError(f"{flag} expects 'Name: value', got {value.split(':')[0]!r}...")
        headers.append((name.strip(), content.strip()))
    return tuple(headers)


def _profile_for_url(base_url: str | None) -> str:
    """The shipped profile whose base path ends the URL's path, the most specific first
    (``.../dedicated/v1`` is FriendliAI's); else the default."""
    path = urlsplit(base_url).path.rstrip("/") if base_url else ""
    default = spec.get_profile(DEFAULT_PROFILE)
    found = max((p for p in spec.profiles().values() if path.endswith(p.base_path)),
                key=lambda p: len(p.base_path), default=default)
    return default.name if found.base_path == default.base_path else found.name


def pick_profile(
    profile_ref: str | None, base_url: str | None, *, flag: str = "--profile"
) -> spec.Profile:
    """The profile ``profile_ref`` names (a shipped name or a profile file's path, as the user
    typed it), else the one the URL implies: the one place a front end turns ``--profile`` into
    a :class:`spec.Profile`. ``flag`` is the option as the front end spells it
    (``--conformance-profile`` under pytest)."""
    ref = profile_ref if profile_ref is not None else _profile_for_url(base_url)
    try:
        return spec.get_profile(ref)
    except KeyError:
        raise UsageError(
            f"{flag} {ref!r} is unknown; choose one of {', '.join(spec.profile_names())}, "
            "or give the path of a profile YAML file"
        ) from None
    except (OSError, ValueError, yaml.YAMLError, TypeError) as exc:
        raise UsageError(f"{flag} {ref!r}: {exc}") from None


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


def check_limits(options: TargetOptions) -> None:
    """The counts and durations of a run: each at least its lowest useful value."""
    for name, value, low in (("max-tokens", options.max_tokens, MIN_MAX_TOKENS),
                             ("concurrency", options.concurrency, 1),
                             ("max-requests", options.max_requests, 1),
                             ("retries", options.retries, 0),
                             ("max-run-memory", options.max_run_memory, 1)):
        if value is not None and value < low:
            raise UsageError(f"{options.flag(name)} must be at least {low}, got {value}")
    for name, seconds in (("timeout", options.timeout), ("run-timeout", options.run_timeout)):
        if not seconds > 0:
            raise UsageError(f"{options.flag(name)} must be positive, got {seconds}")


def check_where(options: TargetOptions, profile: spec.Profile, *, embedded: bool) -> None:
    """A server to test (``--base-url``, unless the embedded mock is it), a base URL that is
    one, and a model where the profile has no listing to find one in."""
    if embedded:
        return
    if not options.base_url:
        raise UsageError(f"{options.flag('base-url')} is required")
    check_base_url(options.base_url, profile, options)
    if not options.model and profile.models_path is None:
        raise UsageError(
            f"profile {profile.name} has no model listing: pass {options.flag('model')} "
            "(for FriendliAI Dedicated, the endpoint id)"
        )


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
