"""The target options: one table, the same flags with the same meaning in every front end.

``conformance run``, ``conformance fuzz`` and the pytest plugin all test a server the same way:
a base URL, a profile, a model, credentials, the features it claims, how it is reached (TLS
trust, a client certificate, a proxy) and the caps that keep a
run cheap. This module holds those options once (:data:`TARGET_OPTIONS`), adds them to an
argparse parser (``--base-url``) or to pytest (``--conformance-base-url``), and reads the
parsed values back as :class:`TargetOptions`; :func:`conformance.target.resolved.resolve_target`
checks them and turns them into :class:`~conformance.run.settings.Settings`. It imports nothing
heavy: the pytest plugin loads it in every pytest run.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_MAX_TOKENS = 16
DEFAULT_CONCURRENCY = 4
DEFAULT_TIMEOUT = 60.0
DEFAULT_RETRIES = 3
DEFAULT_MAX_RUN_MEMORY = 64
DEFAULT_RUN_TIMEOUT = 300.0
"""Seconds a run may take (``--run-timeout``): a full run against a working server takes a
few seconds to a minute; a silent one would otherwise take requests x ``--timeout``."""
"""MiB a run's recorded exchanges may keep together (``--max-run-memory``)."""
PYTEST_PREFIX = "conformance-"
PROFILES = "{profiles}"
"""In an option's help: the shipped profiles' names (:func:`shipped_profile_names`), filled in
when a parser is built, so a new ``spec/profiles/*.yaml`` shows up in ``--help`` by itself."""


@dataclass(frozen=True)
class TargetOption:
    """One option: its flag name without dashes, argparse keywords and the pytest aliases."""

    name: str
    help: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    pytest_aliases: tuple[str, ...] = ()
    group: str = "target"
    """The ``--help`` section: ``target`` (what is tested), ``connection`` (how it is reached)
    or ``limits`` (what a run costs)."""
    attribute: str = ""
    """The :class:`TargetOptions` attribute holding the value, when not :attr:`dest`."""

    @property
    def dest(self) -> str:
        return self.name.replace("-", "_")

    @property
    def help_text(self) -> str:
        """:attr:`help` with the shipped profiles' names filled in."""
        if PROFILES not in self.help:
            return self.help
        return self.help.replace(PROFILES, ", ".join(shipped_profile_names()))


TARGET_OPTIONS: tuple[TargetOption, ...] = (
    TargetOption("base-url", "base URL as an OpenAI client takes it, e.g. "
                 "http://127.0.0.1:8000/v1 or https://api.friendli.ai/dedicated/v1",
                 {"metavar": "URL"}, pytest_aliases=("url",)),
    TargetOption("profile", f"contract profile: {PROFILES}, or the path of a vendor's "
                 "profile YAML shaped like spec/profiles/*.yaml (default: friendli for "
                 ".../dedicated/v1 URLs, else openai)", {"metavar": "P"},
                 attribute="profile_ref"),
    TargetOption("model", "model to test (default: the first model the profile's model listing "
                 "gives; required for FriendliAI, whose dedicated endpoints have no listing: "
                 "pass the endpoint id)", {"metavar": "M"}),
    TargetOption("api-key", "API key sent as a bearer token (default: $CONFORMANCE_API_KEY or "
                 "$OPENAI_API_KEY; never printed)", {"metavar": "KEY"}),
    TargetOption("header", "extra request header, repeatable (values are redacted like keys)",
                 {"action": "append", "default": [], "metavar": "'NAME: VALUE'"}),
    TargetOption("feature", "claim an optional feature (see spec/features.yaml), repeatable",
                 {"action": "append", "default": [], "metavar": "F"}),
    TargetOption("no-feature", "do not claim a feature the profile claims, repeatable",
                 {"action": "append", "default": [], "metavar": "F"}),
    TargetOption("cacert", "trust the CA certificates in FILE (PEM) instead of the system's "
                 "(default: $REQUESTS_CA_BUNDLE, then $SSL_CERT_FILE, then the system trust)",
                 {"metavar": "FILE"}, group="connection"),
    TargetOption("cert", "client certificate (PEM) for mutual TLS; with --key, or holding "
                 "the key too", {"metavar": "FILE"}, group="connection"),
    TargetOption("key", "private key (PEM) of --cert", {"metavar": "FILE"}, group="connection"),
    TargetOption("insecure", "do not verify TLS certificates (the reports say the run was "
                 "weakened)", {"action": "store_true", "default": False}, group="connection"),
    TargetOption("proxy", "send every request through this proxy, e.g. "
                 "http://USER:PASS@proxy:3128 (default: $HTTPS_PROXY / $HTTP_PROXY / "
                 "$ALL_PROXY and $NO_PROXY, as the openai client reads them; credentials are "
                 "redacted)", {"metavar": "URL"}, group="connection"),
    TargetOption("max-tokens", "max_tokens of the requests sent (at least 4; default "
                 f"{DEFAULT_MAX_TOKENS})",
                 {"type": int, "default": DEFAULT_MAX_TOKENS, "metavar": "N"}, group="limits"),
    TargetOption("max-requests", "stop sending after N requests (retries included)",
                 {"type": int, "default": None, "metavar": "N"}, group="limits"),
    TargetOption("retries", "times a 429 or 503 answer is retried, waiting as its Retry-After "
                 f"asks, at most --timeout (default {DEFAULT_RETRIES})",
                 {"type": int, "default": DEFAULT_RETRIES, "metavar": "N"}, group="limits"),
    TargetOption("max-run-memory", "MiB the run's recorded exchanges may keep in memory "
                 "together, whatever the server sends; an exchange past it stops reading "
                 f"(default {DEFAULT_MAX_RUN_MEMORY})",
                 {"type": int, "default": DEFAULT_MAX_RUN_MEMORY, "metavar": "MB"},
                 group="limits"),
    TargetOption("concurrency", "requests in flight at once (default "
                 f"{DEFAULT_CONCURRENCY})",
                 {"type": int, "default": DEFAULT_CONCURRENCY, "metavar": "N"}, group="limits"),
    TargetOption("timeout", f"seconds allowed per request (default {DEFAULT_TIMEOUT:g})",
                 {"type": float, "default": DEFAULT_TIMEOUT, "metavar": "S"}, group="limits"),
    TargetOption("run-timeout", "seconds the run's requests may take together: past it no "
                 "request is sent, one in flight is cut, and the rules not reached SKIP "
                 f"(default {DEFAULT_RUN_TIMEOUT:g})",
                 {"type": float, "default": DEFAULT_RUN_TIMEOUT, "metavar": "S"},
                 group="limits"),
)
"""Every target option, in the order ``--help`` lists them."""


@dataclass(frozen=True)
class TargetOptions:
    """The parsed target options; ``flag`` names an option as the user spelled it."""

    base_url: str | None = None
    profile_ref: str | None = None
    """``--profile`` as typed: a shipped profile's name or a profile file's path, resolved
    once by :func:`conformance.target.checks.pick_profile`."""
    model: str | None = None
    api_key: str | None = None
    header: tuple[str, ...] = ()
    feature: tuple[str, ...] = ()
    no_feature: tuple[str, ...] = ()
    cacert: str | None = None
    cert: str | None = None
    key: str | None = None
    insecure: bool = False
    proxy: str | None = None
    max_tokens: int = DEFAULT_MAX_TOKENS
    max_requests: int | None = None
    retries: int = DEFAULT_RETRIES
    max_run_memory: int = DEFAULT_MAX_RUN_MEMORY
    concurrency: int = DEFAULT_CONCURRENCY
    timeout: float = DEFAULT_TIMEOUT
    run_timeout: float = DEFAULT_RUN_TIMEOUT
    flag_prefix: str = "--"

    def flag(self, name: str) -> str:
        return self.flag_prefix + name


def shipped_profile_names() -> list[str]:
    """What :func:`spec.profile_names` gives (a test holds it), read without importing ``spec``:
    its package's ``profiles/*.yaml``, found without running ``spec/__init__`` (which loads
    YAML and jsonschema, too heavy for every pytest run the plugin takes part in)."""
    found = importlib.util.find_spec("spec")
    folders = list(found.submodule_search_locations or ()) if found is not None else []
    return sorted(path.stem for folder in folders
                  for path in Path(folder, "profiles").glob("*.yaml"))


def _help(option: TargetOption, overrides: Mapping[str, str]) -> str:
    return overrides.get(option.name, option.help_text)


def add_target_arguments(
    parser: Any,
    *,
    defaults: Mapping[str, Any] | None = None,
    helps: Mapping[str, str] | None = None,
    aliases: Mapping[str, tuple[str, ...]] | None = None,
) -> dict[str, Any]:
    """Add every target option to an argparse parser, in its ``target``, ``connection`` and
    ``limits`` groups (returned, so a command can add its own options to them).

    ``defaults`` and ``helps`` override an option's default and help text (fuzzing sends one
    request at a time by default); ``aliases`` adds other flag names for an option."""
    defaults, helps, aliases = defaults or {}, helps or {}, aliases or {}
    groups = {name: parser.add_argument_group(name) for name in ("target", "connection", "limits")}
    for option in TARGET_OPTIONS:
        kwargs = dict(option.kwargs)
        if option.name in defaults:
            kwargs["default"] = defaults[option.name]
        names = [f"--{option.name}", *(f"--{alias}" for alias in aliases.get(option.name, ()))]
        groups[option.group].add_argument(*names, dest=option.dest, help=_help(option, helps),
                                          **kwargs)
    return groups


def add_target_option(group: Any, name: str) -> None:
    """One target option, as ``run`` and ``fuzz`` spell it, in another command's group:
    ``judge`` claims features as they do but has no server to reach."""
    option = next(option for option in TARGET_OPTIONS if option.name == name)
    group.add_argument(f"--{option.name}", dest=option.dest, help=option.help_text,
                       **option.kwargs)


def add_pytest_target_options(add: Callable[..., None]) -> None:
    """Add every target option to pytest (``group.addoption``) as ``--conformance-NAME``."""
    for option in TARGET_OPTIONS:
        names = [f"--{PYTEST_PREFIX}{option.name}",
                 *(f"--{PYTEST_PREFIX}{alias}" for alias in option.pytest_aliases)]
        kwargs = {"default": None, **option.kwargs}
        add(*names, dest=f"conformance_{option.dest}", help=option.help_text, **kwargs)


def target_from_values(get: Callable[[str], Any], flag_prefix: str = "--") -> TargetOptions:
    """:class:`TargetOptions` from a getter of parsed values by ``dest``."""
    values: dict[str, Any] = {}
    for option in TARGET_OPTIONS:
        value = get(option.dest)
        if isinstance(value, list):
            value = tuple(value)
        values[option.attribute or option.dest] = value
    return TargetOptions(**values, flag_prefix=flag_prefix)


def target_from_args(args: Any) -> TargetOptions:
    """:class:`TargetOptions` from an argparse namespace."""
    return target_from_values(lambda dest: getattr(args, dest))


def target_from_pytest(config: Any) -> TargetOptions:
    """:class:`TargetOptions` from a ``pytest.Config`` (``--conformance-NAME`` options)."""
    return target_from_values(lambda dest: config.getoption(f"conformance_{dest}"),
                              flag_prefix=f"--{PYTEST_PREFIX}")
