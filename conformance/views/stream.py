"""A recorded completion stream, read as the contract describes it.

Spec: ``CompletionEventStream`` in ``spec/completions.yaml``: "The decoded ``data`` payloads of
a completion stream, in order": chunks, an optional usage chunk (``choices: []``), error
envelopes, then the ``[DONE]`` sentinel. :class:`StreamView` classifies every dispatched event
once; it judges nothing. Events after the first ``[DONE]`` are kept apart (``after_done``) so
that a defect there (judged by SSE rules) does not distort what the other rules read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from conformance.sse import SSEEvent
from conformance.transport import Exchange
from conformance.wire_json import parse_json
from spec import JSON

PayloadKind = Literal["chunk", "usage", "error", "done", "invalid"]
DONE = "[DONE]"


@dataclass(frozen=True)
class Payload:
    """One event: its position among the stream's events, what it is, and its JSON."""

    position: int
    event: SSEEvent
    kind: PayloadKind
    value: JSON = None
    problem: str | None = None
    after_done: bool = False

    @property
    def is_done(self) -> bool:
        return self.kind == "done"


def parse_payload(data: str) -> tuple[PayloadKind, JSON, str | None]:
    """Classify one event's data: ``[DONE]``, a chunk, a usage chunk, an error, or invalid."""
    if data == DONE:
        return "done", None, None
    try:
        value = parse_json(data)
    except ValueError as exc:
        return "invalid", None, f"not JSON: {exc}"
    if not isinstance(value, dict):
        return "invalid", value, f"a JSON {type(value).__name__}, not an object"
    if "error" in value and "choices" not in value:
        return "error", value, None
    if value.get("choices") == [] or _usage_only(value):
        return "usage", value, None
    return "chunk", value, None


def _usage_only(value: dict[str, JSON]) -> bool:
    """A chunk carrying a usage object whose choices say nothing (no text, no finish): the
    usage chunk with a malformed ``choices`` (USAGE-004 judges that), not a choice's chunk."""
    choices = value.get("choices")
    if not isinstance(value.get("usage"), dict) or not isinstance(choices, list):
        return False
    return all(
        isinstance(c, dict) and c.get("text") in ("", None) and c.get("finish_reason") in ("", None)
        for c in choices
    )


class StreamView:
    """The events of one streamed exchange, classified (see the module docstring)."""

    def __init__(self, exchange: Exchange) -> None:
        self.exchange = exchange
        payloads: list[Payload] = []
        seen_done = False
        for position, event in enumerate(exchange.events):
            kind, value, problem = parse_payload(event.data)
            payloads.append(Payload(position, event, kind, value, problem, seen_done))
            seen_done = seen_done or kind == "done"
        self.payloads: tuple[Payload, ...] = tuple(payloads)

    # -- selections ------------------------------------------------------------------------
    @property
    def dones(self) -> list[Payload]:
        return [p for p in self.payloads if p.is_done]

    @property
    def before_done(self) -> list[Payload]:
        return [p for p in self.payloads if not p.after_done and not p.is_done]

    @property
    def after_done(self) -> list[Payload]:
        return [p for p in self.payloads if p.after_done]

    @property
    def chunks(self) -> list[Payload]:
        """Chunks with choices, before ``[DONE]``."""
        return [p for p in self.before_done if p.kind == "chunk"]

    @property
    def usage_chunks(self) -> list[Payload]:
        """Chunks with ``choices: []``, before ``[DONE]``."""
        return [p for p in self.before_done if p.kind == "usage"]

    @property
    def objects(self) -> list[Payload]:
        """Every JSON chunk (with or without choices), before ``[DONE]``."""
        return [p for p in self.before_done if p.kind in ("chunk", "usage")]

    @property
    def errors(self) -> list[Payload]:
        return [p for p in self.payloads if p.kind == "error"]

    @property
    def invalid(self) -> list[Payload]:
        return [p for p in self.payloads if p.kind == "invalid"]

    def usage_objects(self) -> list[tuple[Payload, dict[str, JSON]]]:
        """Every non-null ``usage`` object carried before ``[DONE]``, with its chunk."""
        found = []
        for payload in self.objects:
            usage = payload.value.get("usage") if isinstance(payload.value, dict) else None
            if isinstance(usage, dict):
                found.append((payload, usage))
        return found

    def final_usage(self) -> dict[str, JSON] | None:
        """The usage of the usage chunk (the last one, if several), else None."""
        for payload in reversed(self.usage_chunks):
            usage = payload.value.get("usage") if isinstance(payload.value, dict) else None
            if isinstance(usage, dict):
                return usage
        return None
