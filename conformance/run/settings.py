"""What one run is configured with: the target, the profile, the claimed features, the caps.

Built once from flags and the environment (:func:`conformance.target.resolved.resolve_target`,
completed by :func:`conformance.target.opening.open_target` with the embedded mock's URL and the
model found), then passed down; nothing below reads the environment. Secrets (the API key,
``--header`` values and the proxy's credentials) live only here and in the requests
themselves; the recorder redacts them before anything is stored.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import spec
from conformance.target.options import (
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_RUN_MEMORY,
    DEFAULT_MAX_TOKENS,
    DEFAULT_RETRIES,
    DEFAULT_RUN_TIMEOUT,
    DEFAULT_TIMEOUT,
)
from conformance.transport import DIRECT, Limits, Network

MAX_TOTAL_BYTES = 16 << 20
"""Bytes read per response at most: a completion of a few hundred tokens is a few hundred KB."""
MAX_EVENTS = 4096
"""Events read per stream at most: a probe's stream has at most a few hundred, and each event
costs a few KB once its JSON is parsed, so this bounds a flood of tiny events."""


DEFAULT_MAX_RUN_BYTES = DEFAULT_MAX_RUN_MEMORY << 20
"""What a run's exchanges keep in memory together at most (``--max-run-memory``): a catalog
run against a well-behaved server keeps under 2 MiB."""


def default_limits(timeout: float = DEFAULT_TIMEOUT) -> Limits:
    """The harness's limits for one exchange: bounded time, bytes and events."""
    return Limits(
        total_time=timeout,
        idle_timeout=min(15.0, timeout),
        connect_timeout=min(10.0, timeout),
        max_total_bytes=MAX_TOTAL_BYTES,
        max_events=MAX_EVENTS,
    )


@dataclass(frozen=True)
class Settings:
    """One run's configuration; ``base_url`` is what an OpenAI client takes (``.../v1``)."""

    base_url: str
    profile: spec.Profile
    model: str
    features: frozenset[str]
    api_key: str | None = field(default=None, repr=False)
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    max_tokens: int = DEFAULT_MAX_TOKENS
    concurrency: int = DEFAULT_CONCURRENCY
    max_requests: int | None = None
    limits: Limits = field(default_factory=default_limits)
    retries: int = DEFAULT_RETRIES
    """Times a 429 / 503 answer is retried (``--retries``)."""
    max_run_bytes: int = DEFAULT_MAX_RUN_BYTES
    """Bytes all the run's exchanges keep together (:class:`~conformance.transport.
    MemoryBudget`)."""
    max_retry_wait: float = 30.0
    """The longest wait before a retry, whatever ``Retry-After`` asks (``--timeout``)."""
    network: Network = field(default=DIRECT, repr=False)
    """How the server is reached: TLS trust, client certificate, proxy (with its secret)."""
    run_timeout: float = DEFAULT_RUN_TIMEOUT
    """Seconds one client's requests may take together, retry waits included
    (``--run-timeout``; :class:`~conformance.client.Client` keeps the clock)."""

    def __post_init__(self) -> None:
        if self.max_tokens < 4:
            raise ValueError(f"max_tokens must be at least 4, got {self.max_tokens}")
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {self.concurrency}")
        if self.max_run_bytes < 1:
            raise ValueError(f"max_run_bytes must be positive, got {self.max_run_bytes}")
        if self.retries < 0:
            raise ValueError(f"retries must not be negative, got {self.retries}")
        if not self.run_timeout > 0:
            raise ValueError(f"run_timeout must be positive, got {self.run_timeout}")
        if self.max_requests is not None and self.max_requests < 1:
            raise ValueError(f"max_requests must be positive, got {self.max_requests}")

    def claims(self, feature: str) -> bool:
        if feature not in spec.all_features():
            raise KeyError(f"unknown feature {feature!r}")
        return feature in self.features

    def url(self, operation: str) -> str:
        """The URL of a profile operation under ``base_url``.

        The profile's paths start with its ``base_path`` (``/v1``, ``/dedicated/v1``); an
        OpenAI client appends the rest (``/completions``) to the base URL it is given.
        """
        op = self.profile.operations.get(operation)
        if op is None:
            raise KeyError(f"profile {self.profile.name} has no {operation!r} operation")
        return join_url(self.base_url, op.path, self.profile.base_path)

    @property
    def models_url(self) -> str:
        """The profile's model listing under ``base_url`` (``<base_url>/models``); a profile
        without one (FriendliAI Dedicated) gets ``<base_url>/models`` too: callers check."""
        path = self.profile.models_path
        if path is None:  # no listing of its own: <base_url>/models, not <base_url>/v1/models
            return self.base_url.rstrip("/") + "/models"
        return join_url(self.base_url, path, self.profile.base_path)

    @property
    def secret_header_names(self) -> tuple[str, ...]:
        """Every ``--header`` name: their values are redacted like API keys."""
        return tuple(name for name, _ in self.headers)

    def request_headers(self) -> list[tuple[str, str]]:
        items = list(self.headers)
        if self.api_key:
            items.insert(0, ("Authorization", f"Bearer {self.api_key}"))
        return items


def join_url(base_url: str, path: str, base_path: str) -> str:
    rest = path[len(base_path) :] if path.startswith(base_path) else path
    return base_url.rstrip("/") + rest
