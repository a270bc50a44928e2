"""The variants of one request, applied hook by hook (see :mod:`.base`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from spec import JSON

from ..sse import Frame
from .base import StreamContext, Variant


class ActiveVariants:
    """An ordered, de-duplicated set of variants; empty: the default rendering."""

    def __init__(self, variants: Iterable[Variant] = ()) -> None:
        self.variants: tuple[Variant, ...] = tuple(dict.fromkeys(variants))

    def __bool__(self) -> bool:
        return bool(self.variants)

    @property
    def names(self) -> list[str]:
        return [variant.name for variant in self.variants]

    @property
    def bend_body(self) -> bool:
        return any(variant.bends_body for variant in self.variants)

    def alter_chunks(self, chunks: Iterator[dict[str, JSON]],
                     ctx: StreamContext) -> Iterator[dict[str, JSON]]:
        for variant in self.variants:
            if variant.bends_chunks:
                chunks = variant.alter_chunks(chunks, ctx)
        return chunks

    def alter_frames(self, frames: Iterator[Frame]) -> Iterator[Frame]:
        framers = [variant for variant in self.variants if variant.bends_frames]
        if not framers:
            return frames
        return self._framed(frames, framers)

    @staticmethod
    def _framed(frames: Iterator[Frame], framers: list[Variant]) -> Iterator[Frame]:
        for frame in frames:
            for variant in framers:
                frame = variant.alter_frame(frame)
            yield frame

    def alter_body(self, body: dict[str, JSON]) -> dict[str, JSON]:
        for variant in self.variants:
            body = variant.alter_body(body)
        return body
