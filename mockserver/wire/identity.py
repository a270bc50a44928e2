"""The fields that identify one response: ``id``, ``created``, ``model``, ``system_fingerprint``.

Spec: ``CompletionResponse`` / ``CompletionChunk`` in ``spec/completions.yaml``; every chunk of a
stream repeats the same identity ("``id`` is non-empty and the same in every chunk", bug class 1
in the research notes). It is drawn once per request and handed to the renderers, so no chunk
can disagree unless a fault makes it.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

ID_PREFIX = "cmpl-"


@dataclass(frozen=True)
class Identity:
    """One response's identity; ``system_fingerprint`` None leaves the field out."""

    id: str
    created: int
    model: str
    system_fingerprint: str | None = None

    @classmethod
    def new(cls, *, model: str, system_fingerprint: str | None = None) -> Identity:
        """A fresh identity: ``cmpl-`` + 32 hex digits, ``created`` = now in Unix seconds."""
        return cls(
            id=ID_PREFIX + _uuid4_hex(),
            created=int(time.time()),
            model=model,
            system_fingerprint=system_fingerprint,
        )


_VERSION_MASK = ~((0xC000 << 48) | (0xF000 << 64))
_VERSION_BITS = (0x8000 << 48) | (4 << 76)


def _uuid4_hex() -> str:
    """``uuid.uuid4().hex`` (a random RFC 4122 version-4 UUID), without building a UUID."""
    value = int.from_bytes(os.urandom(16), "big")
    return f"{(value & _VERSION_MASK) | _VERSION_BITS:032x}"
