"""The two wire formats the mock speaks, and which one a contract profile uses.

A *wire* (``openai`` or ``friendli``) is the shape of the bodies and chunks on a route; a
*profile* (``spec/profiles/<name>.yaml``) is a contract, and names its wire (``wire:``):
``openai``, ``openai-compatible`` and ``vllm`` share OpenAI's wire, ``friendli`` has its own.
The layer under ``mockserver/wire/`` branches on the wire; every other module on a profile's
attributes (``mockserver.contracts``).
"""

from __future__ import annotations

import spec
from spec.profiles import Wire

OPENAI_WIRE: Wire = "openai"
FRIENDLI_WIRE: Wire = "friendli"
WIRES: tuple[Wire, ...] = (OPENAI_WIRE, FRIENDLI_WIRE)
"""Every wire the mock speaks (and faults bend)."""

__all__ = ["FRIENDLI_WIRE", "OPENAI_WIRE", "WIRES", "Wire", "wire_of"]


def wire_of(profile_name: str) -> Wire:
    """The wire of a contract profile: its ``wire`` in ``spec/profiles/<name>.yaml``."""
    try:
        return spec.get_profile(profile_name).wire
    except KeyError:
        raise ValueError(
            f"unknown profile {profile_name!r}: use one of {', '.join(spec.profile_names())}"
        ) from None

