"""Probes: named requests whose recorded exchanges many rules share.

A probe is a record (name, description, the features it needs, the probes it builds on) and an
async function that sends its requests through a :class:`ProbeSession`. The session builds
request bodies from the profile's fields only, records each exchange under a key, and keeps the
choices the probe made along the way (``notes``: the stop string it picked, the token it
biased). The result is a :class:`ProbeOutcome`, which checks read and never change.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

from conformance.client import Client
from conformance.run.settings import Settings
from conformance.transport import Exchange
from conformance.wire_json import parse_json
from spec import JSON


@dataclass
class ProbeOutcome:
    """What one probe recorded.

    ``skipped`` says why the probe did not run at all (a feature not claimed); ``problem`` why
    it could not finish (budget exhausted, connection refused): rules then SKIP or ERROR.
    ``missing`` gives, per key, why a step was not sent (e.g. no stop string could be chosen).
    ``invalid`` holds the keys whose requests are invalid on purpose; ``auxiliary`` those sent
    to another endpoint than the probe's operation to learn something (the server's tokenizer):
    recorded and reported, never judged as completions.
    """

    name: str
    exchanges: dict[str, Exchange] = field(default_factory=dict)
    requests: dict[str, JSON] = field(default_factory=dict)
    notes: dict[str, JSON] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)
    invalid: set[str] = field(default_factory=set)
    auxiliary: set[str] = field(default_factory=set)
    skipped: str | None = None
    problem: str | None = None
    operation: str = "completions"

    def label(self, key: str) -> str:
        return f"{self.name}/{key}"


ProbeBody = Callable[["ProbeSession"], Awaitable[None]]


@dataclass(frozen=True)
class Probe:
    name: str
    description: str
    run: ProbeBody = field(repr=False)
    features: tuple[str, ...] = ()
    traits: tuple[str, ...] = ()
    """The profile traits it needs (``wire=friendli``; see :meth:`spec.Profile.traits`)."""
    needs: tuple[str, ...] = ()
    operation: str = "completions"


class ProbeSession:
    """The tools a probe body uses; see the module docstring."""

    def __init__(
        self,
        probe: Probe,
        settings: Settings,
        client: Client,
        outcomes: Mapping[str, ProbeOutcome],
    ) -> None:
        self.probe = probe
        self.settings = settings
        self.client = client
        self.outcome = ProbeOutcome(probe.name, operation=probe.operation)
        self._earlier = outcomes

    # -- bodies ----------------------------------------------------------------------------
    def claims(self, feature: str) -> bool:
        return self.settings.claims(feature)

    def body(self, prompt: JSON = None, **fields: JSON) -> dict[str, JSON]:
        """A completion body with the model, the prompt and ``fields`` (None values dropped).

        Only the profile's request fields may be used: a probe asking for another is a bug.
        """
        body: dict[str, JSON] = {"model": self.settings.model}
        if prompt is not None:
            body["prompt"] = prompt
        body.update({name: value for name, value in fields.items() if value is not None})
        allowed = set(self.settings.profile.request_fields)
        stray = sorted(set(body) - allowed)
        if stray:
            raise ValueError(f"probe {self.probe.name} uses fields {stray} outside the profile")
        return body

    # -- requests --------------------------------------------------------------------------
    async def complete(self, key: str, body: JSON, *, invalid: bool = False) -> Exchange:
        """POST ``body`` to the completions operation and record it under ``key``."""
        stream = isinstance(body, dict) and body.get("stream") is True
        exchange = await self.client.send(
            "POST", self.settings.url("completions"), json_body=body, stream=stream
        )
        return self._keep(key, body, exchange, invalid)

    async def complete_raw(self, key: str, data: bytes, content_type: str) -> Exchange:
        """POST raw bytes (malformed JSON): always an invalid request."""
        exchange = await self.client.send(
            "POST", self.settings.url("completions"), body=data, content_type=content_type
        )
        return self._keep(key, None, exchange, True)

    async def post_auxiliary(self, key: str, url: str, body: JSON) -> Exchange:
        """POST ``body`` to another endpoint than the operation (``/tokenize``), to learn what
        the probe's next request needs; recorded under ``key``, never judged."""
        exchange = await self.client.send("POST", url, json_body=body)
        self._keep(key, body, exchange, False)
        self.outcome.auxiliary.add(key)
        return exchange

    async def get(self, key: str, url: str) -> Exchange:
        exchange = await self.client.send("GET", url)
        return self._keep(key, None, exchange, False)

    async def gather(self, *steps: Awaitable[Exchange]) -> list[Exchange]:
        """Run ``steps`` concurrently; what they record is kept in the order the steps are
        given, not the order the answers came in, so a rule listing several of them says the
        same live and replayed (``lab/run check``)."""
        before = set(self.outcome.exchanges)
        exchanges = list(await asyncio.gather(*steps))
        place = {id(exchange): index for index, exchange in enumerate(exchanges)}
        new = [key for key in self.outcome.exchanges if key not in before]
        new.sort(key=lambda key: place.get(id(self.outcome.exchanges[key]), len(exchanges)))
        for key in new:  # moved to the end, in the steps' order
            self.outcome.exchanges[key] = self.outcome.exchanges.pop(key)
            self.outcome.requests[key] = self.outcome.requests.pop(key)
        return exchanges

    def _keep(self, key: str, body: JSON, exchange: Exchange, invalid: bool) -> Exchange:
        if key in self.outcome.exchanges:
            raise ValueError(f"probe {self.probe.name} records {key!r} twice")
        self.outcome.exchanges[key] = exchange
        self.outcome.requests[key] = body
        if invalid:
            self.outcome.invalid.add(key)
        return exchange

    # -- bookkeeping -----------------------------------------------------------------------
    def note(self, key: str, value: JSON) -> None:
        self.outcome.notes[key] = value

    def missing(self, key: str, reason: str) -> None:
        self.outcome.missing[key] = reason

    def earlier(self, name: str) -> ProbeOutcome:
        """The outcome of a probe named in ``needs`` (it has finished)."""
        if name not in self.probe.needs:
            raise KeyError(f"probe {self.probe.name} does not declare it needs {name!r}")
        return self._earlier[name]


# -- small readers probe bodies use to pick their next request -----------------------------


def ok_json(exchange: Exchange) -> dict[str, JSON] | None:
    """The JSON object of a 200 response, else None."""
    if exchange.status != 200:
        return None
    try:
        value = parse_json(exchange.body)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def first_choice(exchange: Exchange) -> dict[str, JSON] | None:
    body = ok_json(exchange)
    choices = body.get("choices") if body else None
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        return choices[0]
    return None

