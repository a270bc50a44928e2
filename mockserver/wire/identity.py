"""The fields that identify one response: ``id``, ``created``, ``model``, ``system_fingerprint``.

Spec: ``CompletionResponse`` / ``CompletionChunk`` in ``spec/completions.yaml``; every chunk of a
stream repeats the same identity ("``id`` is non-empty and the same in every chunk", bug class 1
in the research notes). It is drawn once per request and handed to the renderers, so no chunk
can disagree unless a fault makes it.
"""

from __future__ import annotations

import time
import uuid
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
            id=ID_PREFIX + uuid.uuid4().hex,
            created=int(time.time()),
            model=model,
            system_fingerprint=system_fingerprint,
        )
