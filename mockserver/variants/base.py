"""What a rendering variant is: a valid way real servers write the same answer.

A variant is the opposite of a fault: a fault breaks the contract on purpose, a variant keeps
it and writes the answer the way another server does (vLLM's finish on its last token, its
``stop_reason``, ``data:x`` without the space, CRLF line ends). Each has one or more narrow
hooks, applied in order after the wire layer and around the faults:

- ``alter_chunks``: the stream's chunk dicts (before the ``chunk`` faults);
- ``alter_frame``: one event's bytes (after the ``frame`` faults; the payload is kept);
- ``alter_body``: a whole (non-streamed) answer's JSON body.

Every hook is a pure function of its input: a variant never makes the mock non-deterministic.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from spec import JSON

from ..sse import Frame


@dataclass(frozen=True)
class StreamContext:
    """What a stream's variants may know of the request."""

    include_usage: bool
    """``stream_options.include_usage``: the stream ends with a usage chunk."""
    echo: bool = False
    """``echo``: each choice's first chunk is its echoed prompt."""


class Variant:
    """One valid rendering, registered under a kebab-case ``name``."""

    name: ClassVar[str] = ""
    imitates: ClassVar[str] = ""
    """The server (or option) whose rendering it is, shown by ``--list-variants``."""
    description: ClassVar[str] = ""

    def alter_chunks(self, chunks: Iterator[dict[str, JSON]],
                     ctx: StreamContext) -> Iterator[dict[str, JSON]]:
        return chunks

    def alter_frame(self, frame: Frame) -> Frame:
        return frame

    def alter_body(self, body: dict[str, JSON]) -> dict[str, JSON]:
        return body

    @property
    def bends_chunks(self) -> bool:
        return type(self).alter_chunks is not Variant.alter_chunks

    @property
    def bends_frames(self) -> bool:
        return type(self).alter_frame is not Variant.alter_frame

    @property
    def bends_body(self) -> bool:
        return type(self).alter_body is not Variant.alter_body

    def describe(self) -> dict[str, JSON]:
        """The catalog entry served at ``GET /mock/variants``."""
        return {"name": self.name, "imitates": self.imitates, "description": self.description}

    def __repr__(self) -> str:
        return f"<variant {self.name}>"
