"""The target of a run, resolved once from its options and the environment.

``conformance run``, ``conformance fuzz`` and the pytest plugin read the same options
(:mod:`conformance.target.options`) and hand them to :func:`resolve_target`, the one place
they become a :class:`ResolvedTarget`: the :class:`spec.Profile` object, the headers, the
claimed features, the API key, the TLS trust and proxy, the budgets. Every check that needs no
network runs here (:mod:`conformance.target.checks`, :mod:`conformance.target.connection_options`),
so a wrong flag is one line naming it before a mock is started or a request sent. What is
known only once the target is reached (the embedded mock's URL, a model from the listing) is
:func:`conformance.target.opening.open_target`'s to fill in; everything below takes the result
as it is and never reads the environment.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

import spec
from conformance.errors import UsageError
from conformance.run.settings import Settings, default_limits
from conformance.target.checks import (
    check_limits,
    check_where,
    parse_headers,
    pick_features,
    pick_profile,
)
from conformance.target.connection_options import pick_network
from conformance.target.options import TargetOptions

API_KEY_VARIABLES = ("CONFORMANCE_API_KEY", "OPENAI_API_KEY")


@dataclass(frozen=True)
class ResolvedTarget:
    """A target whose options all checked out; :func:`resolve_target` makes it."""

    options: TargetOptions
    """The options as given: ``options.flag`` spells one the way its front end does, for the
    messages of the first contact and of a refused run (:mod:`conformance.target.diagnosis`)."""
    settings: Settings
    """What the run is configured with. Against the embedded mock its ``base_url`` is empty
    until the mock runs, and without ``--model`` its ``model`` is empty until the first
    contact finds one: :func:`~conformance.target.opening.open_target` gives the complete one."""
    embedded: bool
    """The embedded mock is the target (no ``--base-url``)."""

    @property
    def profile(self) -> spec.Profile:
        return self.settings.profile


def resolve_target(
    options: TargetOptions, *, embedded: bool = False, environ: Mapping[str, str] = os.environ
) -> ResolvedTarget:
    """Check ``options`` and resolve each of them once; :class:`UsageError` names the first
    wrong one. ``environ`` gives the API key, CA bundle and proxy that no flag gives (not to
    the embedded mock: nothing from the environment is sent to a process the harness
    started)."""
    profile = pick_profile(options.profile_ref, None if embedded else options.base_url,
                           flag=options.flag("profile"))
    headers = parse_headers(options.header, flag=options.flag("header"))
    features = pick_features(profile, options.feature, options.no_feature)
    network = pick_network(options, environ, embedded=embedded)
    check_limits(options)
    check_where(options, profile, embedded=embedded)
    try:
        settings = Settings(
            base_url=options.base_url or "", profile=profile, model=options.model or "",
            features=features, api_key=pick_api_key(options.api_key, environ, embedded=embedded),
            headers=headers, max_tokens=options.max_tokens, concurrency=options.concurrency,
            max_requests=options.max_requests, limits=default_limits(options.timeout),
            retries=options.retries, max_retry_wait=options.timeout,
            max_run_bytes=options.max_run_memory << 20, run_timeout=options.run_timeout,
            network=network,
        )
    except ValueError as exc:  # check_limits found them first: a bound only Settings knows
        raise UsageError(str(exc)) from None
    return ResolvedTarget(options, settings, embedded)


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
