"""The two wire formats the mock speaks, and which one a contract profile uses."""

from __future__ import annotations

from typing import Literal

import spec

WireProfile = Literal["openai", "friendli"]
WIRE_PROFILES: tuple[WireProfile, ...] = ("openai", "friendli")


def wire_profile(profile: str) -> WireProfile:
    """The wire format of a contract profile: its ``wire`` in ``spec/profiles/<name>.yaml``
    (``openai`` and ``openai-compatible`` share OpenAI's; ``friendli`` has its own)."""
    try:
        return spec.get_profile(profile).wire
    except KeyError:
        raise ValueError(
            f"unknown profile {profile!r}: use one of {', '.join(spec.profile_names())}"
        ) from None
