"""One exchange (fuzzed or recorded) with what the contract makes of its request: what a binding
(:mod:`.binders`) reads to decide where the exchange goes."""

from __future__ import annotations

from dataclasses import dataclass, field

from conformance.contract.validity import Classification
from conformance.transport import Exchange
from conformance.views import StreamView
from spec import JSON

NOT_JUDGED_STATUSES = frozenset({401, 403, 413, 429, 503})
"""Answers about the caller (credentials, size, rate) rather than the body: not judged."""


@dataclass
class Sample:
    """One fuzzed exchange with what the contract makes of its request."""

    operation: str
    body: JSON
    verdict: Classification
    exchange: Exchange
    views: dict[int, StreamView] = field(default_factory=dict)

    @property
    def request(self) -> dict[str, JSON]:
        return self.body if isinstance(self.body, dict) else {}

    @property
    def valid(self) -> bool:
        return self.operation == "completions" and self.verdict.kind in ("valid", "ignorable")

    @property
    def streamed(self) -> bool:
        return self.request.get("stream") is True

    @property
    def sent_json(self) -> bool:
        """A body was sent as ``application/json``: the contract's rules about bodies apply."""
        media = next((value for name, value in self.exchange.request.headers
                      if name.lower() == "content-type"), "")
        return bool(self.exchange.request.body) and media.split(";")[0].strip().lower() == (
            "application/json")
