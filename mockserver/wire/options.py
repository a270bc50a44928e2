"""The request fields that shape the wire output but not the generation."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from spec import JSON

from .formats import OPENAI_WIRE, Wire


@dataclass(frozen=True)
class WireOptions:
    """``stream``, ``stream_options.include_usage``, whether logprobs were asked, ``suffix``."""

    stream: bool = False
    include_usage: bool = False
    logprobs: bool = False
    suffix: str | None = None

    @classmethod
    def from_body(cls, body: Mapping[str, JSON], *, wire: Wire) -> WireOptions:
        """Read them from a validated body (``suffix`` exists on OpenAI's route only)."""
        stream = body.get("stream") is True
        options = body.get("stream_options")
        include_usage = (
            stream and isinstance(options, dict) and options.get("include_usage") is True
        )
        suffix = body.get("suffix") if wire == OPENAI_WIRE else None
        return cls(
            stream=stream,
            include_usage=include_usage,
            logprobs=body.get("logprobs") is not None,
            suffix=suffix if isinstance(suffix, str) else None,
        )
