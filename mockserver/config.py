"""The server's configuration: one frozen value built by the CLI (or a test) and never mutated.

Environment variables are read here and only here (``MockConfig.from_env_and_args``), never deep
inside the server.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from .contracts import ServedContract, served_contracts
from .faults import parse_fault_names
from .variants import parse_variant_names

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_MAX_BODY_BYTES = 1 << 20
API_KEYS_ENV = "MOCKSERVER_API_KEYS"
DEFAULT_READ_TIMEOUT = 60.0
"""Seconds a request body may take to arrive (1 MiB at 17 KiB/s; no real client is slower)."""
DEFAULT_IDLE_TIMEOUT = 75.0
"""Seconds a connection may sit without a complete request (before its first one, or between
keep-alive requests), as nginx's default."""
DEFAULT_MAX_PROMPT_CHARS = 100_000
"""Characters of prompt text per request (all prompts together). The context is 2,048 tokens,
so a prompt this long cannot fit unless its tokens average 48+ characters; tokenizing longer
ones only to refuse them would cost seconds of CPU."""
DEFAULT_REQUEST_BUDGET = 30.0
"""Seconds of engine work one request may take before it is stopped and answered 503 (the
largest valid non-streamed requests take a few seconds on one core)."""


@dataclass(frozen=True)
class MockConfig:
    """Everything ``create_app`` and the CLI need; invalid values raise ValueError naming the flag.

    Latency is in milliseconds; ``None`` rate limits and chaos settings mean off.
    """

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    workers: int = 1
    api_keys: tuple[str, ...] = ()
    faults: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()
    """Valid rendering variants (``--variant``) for every answer (``mockserver.variants``)."""
    ttft_ms: float = 0.0
    itl_ms: float = 0.0
    jitter_ms: float = 0.0
    latency_seed: int = 0
    rate_limit_rpm: int | None = None
    rate_limit_tpm: int | None = None
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    chaos_every: int | None = None
    chaos_probability: float = 0.0
    chaos_seed: int = 0
    chaos_faults: tuple[str, ...] = ()
    cache_entries: int = 4096
    read_timeout: float = DEFAULT_READ_TIMEOUT
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT
    max_prompt_chars: int = DEFAULT_MAX_PROMPT_CHARS
    request_budget: float = DEFAULT_REQUEST_BUDGET
    models_created: int = 1764400000
    tls_cert: str | None = None
    """PEM certificate chain to serve HTTPS with (``--tls-cert``); None serves plain HTTP."""
    tls_key: str | None = None
    """PEM private key of ``tls_cert`` (``--tls-key``), unless the certificate file holds it."""
    tls_client_ca: str | None = None
    """PEM CA bundle (``--tls-client-ca``): require a client certificate it signed (mutual
    TLS); None asks for no client certificate."""
    profile_refs: tuple[str, ...] = ()
    """Contract profiles (``--profile``: a shipped name or a YAML file) served on their own
    paths beside the built-in routes (``mockserver.contracts``)."""

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise ValueError(f"--port must be in 0..65535, got {self.port}")
        if self.workers < 1:
            raise ValueError(f"--workers must be >= 1, got {self.workers}")
        for flag, value in (("--ttft-ms", self.ttft_ms), ("--itl-ms", self.itl_ms),
                            ("--jitter-ms", self.jitter_ms)):
            if not value >= 0:
                raise ValueError(f"{flag} must be >= 0 milliseconds, got {value}")
        for flag, limit in (("--rate-limit-rpm", self.rate_limit_rpm),
                            ("--rate-limit-tpm", self.rate_limit_tpm)):
            if limit is not None and limit < 1:
                raise ValueError(f"{flag} must be >= 1 (leave it out to disable), got {limit}")
        if self.max_body_bytes < 1:
            raise ValueError(f"--max-body-bytes must be >= 1, got {self.max_body_bytes}")
        for flag, seconds in (("--read-timeout", self.read_timeout),
                              ("--idle-timeout", self.idle_timeout),
                              ("--request-budget", self.request_budget)):
            if not seconds > 0:
                raise ValueError(f"{flag} must be > 0 seconds, got {seconds}")
        if self.max_prompt_chars < 1:
            raise ValueError(f"--max-prompt-chars must be >= 1, got {self.max_prompt_chars}")
        if self.cache_entries < 0:
            raise ValueError(f"--cache-entries must be >= 0, got {self.cache_entries}")
        if self.chaos_every is not None and self.chaos_every < 1:
            raise ValueError(f"--chaos-every must be >= 1, got {self.chaos_every}")
        if not 0.0 <= self.chaos_probability <= 1.0:
            raise ValueError(
                f"--chaos-probability must be in [0, 1], got {self.chaos_probability}"
            )
        if any(not key for key in self.api_keys):
            raise ValueError("--api-key must not be empty")
        for tls_flag, tls_file in (("--tls-key", self.tls_key),
                                   ("--tls-client-ca", self.tls_client_ca)):
            if tls_file and not self.tls_cert:
                raise ValueError(f"{tls_flag} needs --tls-cert")
        if self.tls_cert and self.workers > 1:
            raise ValueError("--tls-cert serves from one process; leave out --workers")
        parse_fault_names(self.faults)  # unknown names fail at start-up, listing the valid ones
        parse_variant_names(self.variants)  # so do unknown variants
        served_contracts(self.profile_refs)  # so does a profile that cannot be served
        parse_fault_names(self.chaos_faults)

    def contracts(self) -> tuple[ServedContract, ...]:
        """The built-in contracts, then each ``--profile``'s."""
        return served_contracts(self.profile_refs)

    @property
    def scheme(self) -> str:
        return "https" if self.tls_cert else "http"

    @property
    def rate_limits_enabled(self) -> bool:
        return self.rate_limit_rpm is not None or self.rate_limit_tpm is not None


def api_keys_from_env(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Keys from ``MOCKSERVER_API_KEYS`` (comma-separated; blanks ignored)."""
    raw = (os.environ if environ is None else environ).get(API_KEYS_ENV, "")
    return tuple(key.strip() for key in raw.split(",") if key.strip())
