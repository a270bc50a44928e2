"""Faults in transport: content types, and answers that stop, drip or drop the connection.

Spec: the ``application/json`` and ``text/event-stream`` media types of the completions
responses; bug classes 11 and 13 of the research notes.
"""

from __future__ import annotations

import asyncio

from .base import AbortConnection, Fault, FaultContext, Write
from .registry import register

SLOW_DRIP_PAUSE = 0.001
"""Seconds between single bytes of a ``slow-drip`` stream."""
STALL_AFTER = 2
DISCONNECT_AFTER = 3
CLIENT_POLL = 0.05


@register
class ContentTypeWrong(Fault):
    name = "content-type-wrong"
    description = "Streams are sent as `application/json` instead of `text/event-stream`."
    breaks = "A streamed response has Content-Type text/event-stream."
    hook = "headers"
    stream = True

    def alter_headers(self, headers: dict[str, str], ctx: FaultContext) -> dict[str, str]:
        headers["Content-Type"] = "application/json"
        return headers


@register
class ContentTypeJsonWrong(Fault):
    name = "content-type-json-wrong"
    description = "Non-streamed completions are sent as `text/plain`."
    breaks = "A non-streamed response has Content-Type application/json."
    hook = "headers"
    stream = False

    def alter_headers(self, headers: dict[str, str], ctx: FaultContext) -> dict[str, str]:
        headers["Content-Type"] = "text/plain; charset=utf-8"
        return headers


@register
class DisconnectMidStream(Fault):
    name = "disconnect-mid-stream"
    description = (
        f"The connection is dropped after {DISCONNECT_AFTER} events: no finish chunk, no [DONE]."
    )
    breaks = "A stream ends with finish chunks and `[DONE]` (or an error event), never silently."
    hook = "writer"
    stream = True

    def wrap_write(self, write: Write, ctx: FaultContext) -> Write:
        written = 0

        async def dropping(data: bytes) -> None:
            nonlocal written
            if written >= DISCONNECT_AFTER:
                raise AbortConnection(self.name)
            written += 1
            await write(data)

        return dropping


@register
class DisconnectMidBody(Fault):
    name = "disconnect-mid-body"
    description = ("A non-streamed answer is cut off: half its body is sent, then the "
                   "connection drops.")
    breaks = "A response arrives whole (its Content-Length of bytes, then a clean end)."
    hook = "writer"
    stream = False

    def wrap_write(self, write: Write, ctx: FaultContext) -> Write:
        async def halving(data: bytes) -> None:
            await write(bytes(data[: len(data) // 2]))
            raise AbortConnection(self.name)

        return halving


@register
class SlowDrip(Fault):
    name = "slow-drip"
    description = f"Stream bytes are sent one at a time, {SLOW_DRIP_PAUSE * 1000:g} ms apart."
    breaks = "Events arrive whole and promptly (clients must not assume one event per read)."
    hook = "writer"
    stream = True

    def wrap_write(self, write: Write, ctx: FaultContext) -> Write:
        async def dripping(data: bytes) -> None:
            for position in range(len(data)):
                await write(data[position : position + 1])
                await asyncio.sleep(SLOW_DRIP_PAUSE)

        return dripping


@register
class Stall(Fault):
    name = "stall"
    description = (
        f"The stream stops after {STALL_AFTER} events and the connection stays open until the "
        "client leaves."
    )
    breaks = "A stream makes progress until it ends (clients need a read timeout)."
    hook = "writer"
    stream = True
    chaos = False

    def wrap_write(self, write: Write, ctx: FaultContext) -> Write:
        written = 0

        async def stalling(data: bytes) -> None:
            nonlocal written
            if written >= STALL_AFTER:
                while not ctx.client_gone():
                    await asyncio.sleep(CLIENT_POLL)
                raise ConnectionResetError("the client left a stalled stream")
            written += 1
            await write(data)

        return stalling
