"""The two wire formats the mock speaks, and which one a contract profile uses."""

from __future__ import annotations

from typing import Literal

import spec

WireProfile = Literal["openai", "friendli"]
OPENAI_WIRE: WireProfile = "openai"
FRIENDLI_WIRE: WireProfile = "friendli"
WIRE_PROFILES: tuple[WireProfile, ...] = (OPENAI_WIRE, FRIENDLI_WIRE)
"""The wires (a profile's ``wire``), not profiles: the layer under ``mockserver/wire/`` branches
on these, every other module on a profile's attributes (``mockserver.contracts``)."""


def wire_profile(profile: str) -> WireProfile:
    """The wire format of a contract profile: its ``wire`` in ``spec/profiles/<name>.yaml``
    (``openai`` and ``openai-compatible`` share OpenAI's; ``friendli`` has its own)."""
    try:
        return spec.get_profile(profile).wire
    except KeyError:
        raise ValueError(
            f"unknown profile {profile!r}: use one of {', '.join(spec.profile_names())}"
        ) from None
