"""Small readers of the payload shapes that faults bend (choices, finish chunks, usage chunks).

Payloads reach hooks freshly built for the request, so faults change them in place.
"""

from __future__ import annotations

from spec import JSON


def choices(payload: JSON) -> list[dict[str, JSON]]:
    """The choice dicts of a response body or chunk (empty for anything else)."""
    if isinstance(payload, dict) and isinstance(payload.get("choices"), list):
        return [choice for choice in payload["choices"] if isinstance(choice, dict)]
    return []


def is_finish_chunk(payload: JSON) -> bool:
    """A chunk in which some choice has a finish_reason."""
    return any(choice.get("finish_reason") is not None for choice in choices(payload))


def is_usage_chunk(payload: JSON) -> bool:
    """The ``choices: []`` chunk that carries the usage."""
    return (
        isinstance(payload, dict)
        and payload.get("choices") == []
        and isinstance(payload.get("usage"), dict)
    )


def usage(payload: JSON) -> dict[str, JSON] | None:
    value = payload.get("usage") if isinstance(payload, dict) else None
    return value if isinstance(value, dict) else None


def logprobs_objects(payload: JSON) -> list[dict[str, JSON]]:
    """The logprobs objects of every choice that has one."""
    return [c["logprobs"] for c in choices(payload) if isinstance(c.get("logprobs"), dict)]
