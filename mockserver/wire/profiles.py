"""The two wire formats the mock speaks, and how a contract profile name maps onto them."""

from __future__ import annotations

from typing import Literal

WireProfile = Literal["openai", "friendli"]
WIRE_PROFILES: tuple[WireProfile, ...] = ("openai", "friendli")


def wire_profile(profile: str) -> WireProfile:
    """``openai`` and ``openai-compatible`` share OpenAI's wire format; ``friendli`` has its own."""
    if profile in ("openai", "openai-compatible"):
        return "openai"
    if profile == "friendli":
        return "friendli"
    raise ValueError(
        f"unknown profile {profile!r}: use 'openai' (or 'openai-compatible') or 'friendli'"
    )
