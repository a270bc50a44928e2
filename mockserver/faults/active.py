"""The faults active on one request, applied hook by hook at the points the handlers call.

A request's faults come from the server (``--fault``), the ``X-Mock-Fault`` header and chaos
(``mockserver.faults.chaos``). Each ``apply_*`` method runs the faults of one hook, in the
order they were named, skipping those that do not apply to the request (``Fault.applies``).
With no faults every method is the identity, at the cost of one empty loop.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from spec import JSON

from ..sse import Frame
from .base import ErrorReply, Fault, FaultContext, HookKind, Verdict, Write


class ActiveFaults:
    """An ordered, de-duplicated set of faults for one request."""

    def __init__(self, faults: Iterable[Fault] = ()) -> None:
        self.faults: tuple[Fault, ...] = tuple(dict.fromkeys(faults))

    def __bool__(self) -> bool:
        return bool(self.faults)

    def with_fault(self, fault: Fault | None) -> ActiveFaults:
        if fault is None or fault in self.faults:
            return self
        return ActiveFaults((*self.faults, fault))

    @property
    def names(self) -> list[str]:
        return [fault.name for fault in self.faults]

    def _of(self, hook: HookKind, ctx: FaultContext) -> list[Fault]:
        return [fault for fault in self.faults if fault.hook == hook and fault.applies(ctx)]

    def has(self, hook: HookKind, ctx: FaultContext) -> bool:
        return bool(self._of(hook, ctx))

    def judge(self, verdict: Verdict, ctx: FaultContext) -> Verdict:
        for fault in self._of("validation", ctx):
            verdict = fault.judge(verdict, ctx)
        return verdict

    def alter_body(self, body: dict[str, JSON], ctx: FaultContext) -> dict[str, JSON]:
        for fault in self._of("body", ctx):
            body = fault.alter_body(dict(body), ctx)
        return body

    def alter_payload(self, payload: dict[str, JSON], ctx: FaultContext) -> dict[str, JSON] | None:
        for fault in self._of("payload", ctx):
            altered = fault.alter_payload(payload, ctx)
            if altered is None:
                return None
            payload = altered
        return payload

    def alter_chunks(
        self, chunks: Iterator[dict[str, JSON]], ctx: FaultContext
    ) -> Iterator[dict[str, JSON]]:
        payload_faults = self._of("payload", ctx)
        if payload_faults:
            chunks = self._payloads(chunks, ctx)
        for fault in self._of("chunks", ctx):
            chunks = fault.alter_chunks(chunks, ctx)
        return chunks

    def _payloads(
        self, chunks: Iterator[dict[str, JSON]], ctx: FaultContext
    ) -> Iterator[dict[str, JSON]]:
        for chunk in chunks:
            altered = self.alter_payload(chunk, ctx)
            if altered is not None:
                yield altered

    def alter_frames(self, frames: Iterator[Frame], ctx: FaultContext) -> Iterator[Frame]:
        for fault in self._of("frames", ctx):
            frames = fault.alter_frames(frames, ctx)
        return frames

    def wrap_write(self, write: Write, ctx: FaultContext) -> Write:
        for fault in self._of("writer", ctx):
            write = fault.wrap_write(write, ctx)
        return write

    def alter_headers(self, headers: dict[str, str], ctx: FaultContext) -> dict[str, str]:
        for fault in self._of("headers", ctx):
            headers = fault.alter_headers(dict(headers), ctx)
        return headers

    def alter_response(self, body: JSON, ctx: FaultContext) -> JSON:
        for fault in self._of("response", ctx):
            body = fault.alter_response(body, ctx)
        return body

    def alter_error(self, reply: ErrorReply, ctx: FaultContext) -> ErrorReply:
        for fault in self._of("error", ctx):
            reply = fault.alter_error(reply, ctx)
        return reply
