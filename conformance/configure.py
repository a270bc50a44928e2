"""From command-line values to :class:`~conformance.settings.Settings`.

Everything the user can get wrong is checked here, with a message naming the flag and the
value (:class:`UsageError`, exit status 2): an unknown profile or feature, a header without a
colon, a FriendliAI run without ``--model``. :func:`settings_from_target` is the one recipe
that ``conformance run``, ``conformance fuzz`` and the pytest plugin use (their flags come from
one table, :mod:`conformance.target_options`).
"""

from __future__ import annotations

import dataclasses
import os
import ssl
from collections.abc import Callable, Iterable, Mapping
from typing import Protocol
from urllib.parse import urlsplit

import yaml

import spec
from conformance.transport import Exchange, Network, proxy_for

from .errors import HarnessError, UsageError
from .first_contact import check_base_url, first_contact
from .settings import DEFAULT_MAX_RUN_BYTES, Settings, default_limits, join_url
from .target_options import DEFAULT_RUN_TIMEOUT, TargetOptions

__all__ = ["HarnessError", "UsageError", "check_target", "pick_profile", "settings_from_target",
           "split_list"]


API_KEY_VARIABLES = ("CONFORMANCE_API_KEY", "OPENAI_API_KEY")
CA_BUNDLE_VARIABLES = ("REQUESTS_CA_BUNDLE", "SSL_CERT_FILE")
"""Where the ecosystem looks for a CA bundle when none is given: requests reads the first,
OpenSSL (Python's ``ssl``, httpx with ``trust_env``) the second."""


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


DEFAULT_PROFILE = "openai"


def _profile_for_url(base_url: str | None) -> str:
    """The shipped profile whose base path ends the URL's path, the most specific first
    (``.../dedicated/v1`` is FriendliAI's); else the default."""
    path = urlsplit(base_url).path.rstrip("/") if base_url else ""
    default = spec.get_profile(DEFAULT_PROFILE)
    found = max((p for p in spec.profiles().values() if path.endswith(p.base_path)),
                key=lambda p: len(p.base_path), default=default)
    return default.name if found.base_path == default.base_path else found.name


def pick_profile(
    explicit: str | None, base_url: str | None, *, flag: str = "--profile"
) -> spec.Profile:
    """The profile named (or a profile file), else the one the URL implies; ``flag`` is the
    option as the front end spells it (``--conformance-profile`` under pytest)."""
    name = explicit if explicit is not None else _profile_for_url(base_url)
    try:
        return spec.get_profile(name)
    except KeyError:
        raise UsageError(
            f"{flag} {name!r} is unknown; choose one of {', '.join(spec.profile_names())}, "
            "or give the path of a profile YAML file"
        ) from None
    except (OSError, ValueError, yaml.YAMLError, TypeError) as exc:
        raise UsageError(f"{flag} {name!r}: {exc}") from None


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


def _readable(flag: str, path: str) -> str:
    if not os.path.isfile(path):
        raise UsageError(f"{flag} {path!r}: no such file")
    return path


def pick_network(
    options: TargetOptions, environ: Mapping[str, str], *, embedded: bool,
) -> Network:
    """The TLS trust, client certificate and proxy of a run, from flags, else the environment.

    The CA bundle is ``--cacert``, else ``$REQUESTS_CA_BUNDLE``, else ``$SSL_CERT_FILE``, else
    the system trust. The proxy is ``--proxy``, else what ``HTTPS_PROXY`` / ``HTTP_PROXY`` /
    ``ALL_PROXY`` / ``NO_PROXY`` give the base URL, read as the ``openai`` client (httpx) reads
    them (:func:`conformance.transport.proxy_for`). The embedded mock is a child on loopback:
    the environment's proxy and CA bundle are not for it (flags still are). Every file is
    loaded here, so a wrong one is a usage error naming its flag before anything is sent."""
    cacert = options.cacert and _readable(options.flag("cacert"), options.cacert)
    if not cacert and not embedded:
        for name in CA_BUNDLE_VARIABLES:
            if environ.get(name):
                cacert = _readable(f"${name}", environ[name])
                break
    if options.key and not options.cert:
        raise UsageError(f"{options.flag('key')} needs {options.flag('cert')}")
    cert = options.cert and _readable(options.flag("cert"), options.cert)
    key = options.key and _readable(options.flag("key"), options.key)
    proxy = options.proxy
    if proxy is None and not embedded and options.base_url:
        proxy = proxy_for(options.base_url, environ)
    if proxy is not None and urlsplit(proxy).scheme not in ("http", "https"):
        raise UsageError(f"the proxy must be an http:// or https:// URL, got scheme "
                         f"{urlsplit(proxy).scheme!r}")
    network = Network(cacert=cacert or None, cert=cert or None, key=key or None,
                      insecure=bool(options.insecure), proxy=proxy or None)
    try:
        network.ssl_context()
    except (ssl.SSLError, OSError) as exc:
        names = "/".join(options.flag(n) for n in ("cacert", "cert", "key")
                         if getattr(options, n))
        raise UsageError(f"cannot load the TLS files of {names or 'the CA bundle'}: "
                         f"{exc}") from None
    return network


MIN_MAX_TOKENS = 4
"""The probes need room for a few tokens (a stop string, a length cut shorter than greedy)."""


def check_target(options: TargetOptions, *, embedded: bool = False) -> spec.Profile:
    """Every check of the target options that needs no network, so a wrong flag is reported
    before a mock is started or a request sent; returns the profile."""
    profile = pick_profile(options.profile, None if embedded else options.base_url,
                           flag=options.flag("profile"))
    parse_headers(options.header, flag=options.flag("header"))
    pick_features(profile, options.feature, options.no_feature)
    pick_network(options, {}, embedded=embedded)
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
    if not embedded and not options.base_url:
        raise UsageError(f"{options.flag('base-url')} is required")
    if not embedded and options.base_url:
        check_base_url(options.base_url, profile, options)
    if not embedded and not options.model and profile.models_path is None:
        raise UsageError(
            f"profile {profile.name} has no model listing: pass {options.flag('model')} "
            "(for FriendliAI Dedicated, the endpoint id)"
        )
    return profile


async def settings_from_target(
    options: TargetOptions,
    *,
    embedded: EmbeddedTarget | None = None,
    on_exchange: Callable[[Exchange], None] | None = None,
    environ: Mapping[str, str] = os.environ,
) -> Settings:
    """The one recipe from target options to :class:`Settings`, for run, fuzz and pytest.

    Against the embedded mock (``embedded``) the URL is the mock's for the profile and no key
    from the environment is sent; without ``--model`` the model is the first of the profile's
    model listing (the embedded mock's OpenAI listing when the profile has none). The target
    is reached once first (:func:`~conformance.first_contact.first_contact`), so a target that
    cannot be reached or refuses the key is one clear line, not a run of verdicts."""
    profile = check_target(options, embedded=embedded is not None)
    base_url = embedded.url_for(profile.name) if embedded is not None else options.base_url
    settings = build_settings(
        base_url=base_url or "", profile=profile, model=options.model or "",
        features=pick_features(profile, options.feature, options.no_feature),
        api_key=pick_api_key(options.api_key, environ, embedded=embedded is not None),
        headers=parse_headers(options.header), max_tokens=options.max_tokens,
        concurrency=options.concurrency, max_requests=options.max_requests,
        timeout=options.timeout, retries=options.retries,
        max_run_bytes=options.max_run_memory << 20, run_timeout=options.run_timeout,
    )
    settings = dataclasses.replace(
        settings, network=pick_network(options, environ, embedded=embedded is not None))
    if options.model or (profile.models_path is None and embedded is None):
        await first_contact(settings, options, discover=False)
        return settings
    listing = None
    if profile.models_path is None and embedded is not None:
        listing = join_url(embedded.openai_url, "/v1/models", "/v1")
    model = await first_contact(settings, options, discover=True, listing=listing,
                                on_exchange=on_exchange)
    return dataclasses.replace(settings, model=model or "")


class EmbeddedTarget(Protocol):
    """What the recipe needs of the embedded mock (:class:`conformance.embedded.EmbeddedMock`)."""

    openai_url: str

    def url_for(self, profile: str) -> str: ...


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
    retries: int = 3,
    max_run_bytes: int = DEFAULT_MAX_RUN_BYTES,
    run_timeout: float = DEFAULT_RUN_TIMEOUT,
) -> Settings:
    if timeout <= 0:
        raise UsageError(f"--timeout must be positive, got {timeout}")
    limits = default_limits(timeout)
    try:
        return Settings(
            base_url=base_url, profile=profile, model=model, features=features,
            api_key=api_key, headers=headers, max_tokens=max_tokens,
            concurrency=concurrency, max_requests=max_requests, limits=limits,
            retries=retries, max_retry_wait=timeout, max_run_bytes=max_run_bytes,
            run_timeout=run_timeout,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
