"""In-process rate limits: token buckets of requests and tokens per minute, per caller.

A caller is its API key when keys are configured (``--api-key``: the gate has checked it),
else its client address. A Bearer token that is not a configured key is no identity -- a client
could send a new one with every request -- so it gets no bucket of its own. The request bucket holds
``--rate-limit-rpm`` and refills continuously at rpm/60 per second; a request takes one. The
token bucket holds ``--rate-limit-tpm``; a request is admitted while it is not empty, and the
request's real usage (prompt + completion tokens) is taken once it is known, so it may go
negative and hold later requests back. A refused request gets 429 (``rate_limit_error``) with
``Retry-After``; every admitted or refused request gets the ``x-ratelimit-*`` headers.

Limits are per process: with ``--workers N`` each worker has its own buckets
(``mockserver/README.md``, "Scaling out").
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import RATE_LIMIT, ApiError

MAX_CALLERS = 10_000
"""Buckets kept before the fullest ones are forgotten (a full bucket is the default state)."""


class TokenBucket:
    """A continuously refilled bucket of ``capacity`` units per minute."""

    def __init__(self, capacity: int, now: float) -> None:
        self.capacity = float(capacity)
        self.rate = capacity / 60.0
        self.level = float(capacity)
        self._stamp = now

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self._stamp) * self.rate)
        self._stamp = now

    def wait_for(self, amount: float) -> float:
        """Seconds until the bucket holds ``amount``."""
        return max(0.0, (amount - self.level) / self.rate)

    def until_full(self) -> float:
        return max(0.0, (self.capacity - self.level) / self.rate)


@dataclass
class Admission:
    """A caller's buckets after admission; ``headers()`` are sent with the response."""

    key: str
    requests: TokenBucket | None
    tokens: TokenBucket | None

    def headers(self) -> dict[str, str]:
        headers: dict[str, str] = {}
        for suffix, bucket in (("requests", self.requests), ("tokens", self.tokens)):
            if bucket is not None:
                headers[f"x-ratelimit-limit-{suffix}"] = str(int(bucket.capacity))
                headers[f"x-ratelimit-remaining-{suffix}"] = str(max(0, math.floor(bucket.level)))
                headers[f"x-ratelimit-reset-{suffix}"] = _duration(bucket.until_full())
        return headers


class RateLimiter:
    """Buckets per caller for one process."""

    def __init__(self, *, rpm: int | None, tpm: int | None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.rpm = rpm
        self.tpm = tpm
        self._clock = clock
        self._callers: dict[str, tuple[TokenBucket | None, TokenBucket | None]] = {}

    def _buckets(self, key: str, now: float) -> tuple[TokenBucket | None, TokenBucket | None]:
        buckets = self._callers.get(key)
        if buckets is None:
            if len(self._callers) >= MAX_CALLERS:
                self._forget_full(now)
            buckets = (
                TokenBucket(self.rpm, now) if self.rpm is not None else None,
                TokenBucket(self.tpm, now) if self.tpm is not None else None,
            )
            self._callers[key] = buckets
        for bucket in buckets:
            if bucket is not None:
                bucket.refill(now)
        return buckets

    def _forget_full(self, now: float) -> None:
        for key, buckets in list(self._callers.items()):
            for bucket in buckets:
                if bucket is not None:
                    bucket.refill(now)
            if all(b is None or b.level >= b.capacity for b in buckets):
                del self._callers[key]
        if len(self._callers) >= MAX_CALLERS:  # nobody is idle: forget the oldest
            self._callers.pop(next(iter(self._callers)))

    def admit(self, key: str) -> Admission:
        """Take one request from ``key``'s buckets, or raise the 429 :class:`ApiError`."""
        requests, tokens = self._buckets(key, self._clock())
        admission = Admission(key, requests, tokens)
        if requests is not None and requests.level < 1.0:
            raise _limited("requests", requests.wait_for(1.0), admission)
        if tokens is not None and tokens.level <= 0.0:
            raise _limited("tokens", tokens.wait_for(1.0), admission)
        if requests is not None:
            requests.level -= 1.0
        return admission

    def charge(self, admission: Admission, tokens: int) -> None:
        """Take a finished request's usage from the caller's token bucket."""
        if admission.tokens is not None:
            admission.tokens.refill(self._clock())
            admission.tokens.level -= tokens


def _limited(kind: str, wait: float, admission: Admission) -> ApiError:
    retry_after = max(1, math.ceil(wait))
    return ApiError(
        429,
        f"Rate limit reached for {kind} per minute. Retry after {retry_after} s, or start the "
        f"mock with a higher --rate-limit-{'rpm' if kind == 'requests' else 'tpm'}.",
        type=RATE_LIMIT,
        code="rate_limit_exceeded",
        headers={"Retry-After": str(retry_after), **admission.headers()},
    )


def _duration(seconds: float) -> str:
    """OpenAI's reset format: ``20ms``, ``1.5s``, ``6m0s``."""
    if seconds < 1.0:
        return f"{math.ceil(seconds * 1000)}ms"
    if seconds < 60.0:
        return f"{seconds:.3g}s"
    minutes, rest = divmod(seconds, 60.0)
    return f"{int(minutes)}m{rest:.0f}s"
