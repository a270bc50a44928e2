"""Which recorded exchange answers a request, and, when none does, which one came closest.

A request matches a recording on its method, path and query, media type and *canonical* body:
a JSON body is compared as JSON (key order and spacing do not matter), any other body byte for
byte. Identical requests recorded several times (a probe that sends the same request twice, a
client that retries) are answered in the order they were recorded, then from the start again;
among them a recording whose raw bytes are the same as the request's is preferred.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .recording import RecordedExchange

MatchKey = tuple[str, str, str | None, str]
JSON_MEDIA_TYPES = frozenset({"application/json", None})
SHOWN_CHARS = 80


def canonical_body(content_type: str | None, body: bytes) -> str:
    """The body as compared: sorted compact JSON for JSON bodies, else its bytes in hex."""
    parsed = _json(content_type, body)
    if parsed is not _NOT_JSON:
        return "json:" + json.dumps(parsed, sort_keys=True, separators=(",", ":"),
                                    ensure_ascii=False)
    return "bytes:" + body.hex()


def match_key(method: str, target: str, content_type: str | None, body: bytes) -> MatchKey:
    return (method.upper(), target, content_type, canonical_body(content_type, body))


@dataclass
class _Slot:
    exchange: RecordedExchange
    served: int = 0


class Matcher:
    """Hands out recorded exchanges for requests; see the module docstring."""

    def __init__(self, exchanges: Iterable[RecordedExchange]) -> None:
        self.exchanges = list(exchanges)
        self._groups: dict[MatchKey, list[_Slot]] = {}
        for exchange in self.exchanges:
            key = match_key(exchange.method, exchange.target, exchange.content_type,
                            exchange.body)
            self._groups.setdefault(key, []).append(_Slot(exchange))

    def take(
        self, method: str, target: str, content_type: str | None, body: bytes
    ) -> RecordedExchange | None:
        """The next recorded answer to this request, or None when nothing matches."""
        slots = self._groups.get(match_key(method, target, content_type, body))
        if not slots:
            return None
        exact = [slot for slot in slots if slot.exchange.body == body] or slots
        slot = min(exact, key=lambda s: s.served)  # min keeps the earliest among equals
        slot.served += 1
        return slot.exchange

    def closest(
        self, method: str, target: str, content_type: str | None, body: bytes
    ) -> tuple[RecordedExchange, str, str | None]:
        """The recorded request nearest to this one, what differs first, and the JSON field
        that differs (None when the difference is not a body field)."""
        method = method.upper()
        wanted = _json(content_type, body)
        best: tuple[tuple[bool, bool, bool, int], RecordedExchange, str, str | None] | None = None
        for exchange in self.exchanges:
            recorded = _json(exchange.content_type, exchange.body)
            count, difference, param = _body_difference(wanted, recorded, body, exchange.body)
            if exchange.content_type != content_type:
                difference, param = _differs(
                    "Content-Type", exchange.content_type, content_type), None
            if exchange.target != target:
                difference, param = _differs("path", exchange.target, target), None
            if exchange.method != method:
                difference, param = _differs("method", exchange.method, method), None
            score = (exchange.method != method, exchange.target != target,
                     exchange.content_type != content_type, count)
            if best is None or score < best[0]:
                best = (score, exchange, difference, param)
        if best is None:  # pragma: no cover - a Matcher always holds at least one exchange
            raise LookupError("the recording is empty")
        return best[1], best[2], best[3]


_NOT_JSON = object()


def _json(content_type: str | None, body: bytes) -> Any:
    if content_type not in JSON_MEDIA_TYPES and not (content_type or "").endswith("+json"):
        return _NOT_JSON
    if not body:
        return _NOT_JSON
    try:
        return json.loads(body)
    except ValueError:  # UnicodeDecodeError included
        return _NOT_JSON


def _body_difference(
    wanted: Any, recorded: Any, raw_wanted: bytes, raw_recorded: bytes
) -> tuple[int, str, str | None]:
    """How many body fields differ, a sentence on the first, and that field's name."""
    if isinstance(wanted, dict) and isinstance(recorded, dict):
        names = list(wanted) + [name for name in recorded if name not in wanted]
        differing = [name for name in names if wanted.get(name, _NOT_JSON)
                     != recorded.get(name, _NOT_JSON)]
        if not differing:
            return 0, "the body is the same", None
        name = differing[0]
        return len(differing), _differs(
            f"body field {name!r}", recorded.get(name, _NOT_JSON), wanted.get(name, _NOT_JSON)
        ), name
    if wanted is not _NOT_JSON and wanted == recorded:
        return 0, "the body is the same", None
    if raw_wanted == raw_recorded:
        return 0, "the body is the same", None
    return 1_000, _differs("body", raw_recorded, raw_wanted), None


def _differs(what: str, recorded: Any, got: Any) -> str:
    return f"{what}: recorded {_show(recorded)}, this request {_show(got)}"


def _show(value: Any) -> str:
    if value is _NOT_JSON:
        return "absent"
    if isinstance(value, bytes):
        return repr(value[:SHOWN_CHARS]) + ("..." if len(value) > SHOWN_CHARS else "")
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."
