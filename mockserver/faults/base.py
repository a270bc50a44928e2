"""What a fault is: a small object named after its defect, with exactly one narrow hook.

Every hook is an identity transform by default; a fault overrides the one method of the hook
it declares (the registry refuses any other shape). The hooks, in the order a request meets
them:

==============  ===================================================  ==========================
hook            method                                               what it may change
==============  ===================================================  ==========================
``validation``  ``judge(verdict, ctx) -> Verdict``                   accept / reject the body
``body``        ``alter_body(body, ctx) -> body``                    the parameters the engine
                                                                     is given
``payload``     ``alter_payload(payload, ctx) -> payload | None``    a response body or one
                                                                     chunk (None drops a chunk)
``chunks``      ``alter_chunks(chunks, ctx) -> chunks``              the order / number of
                                                                     chunks
``frames``      ``alter_frames(frames, ctx) -> frames``              the SSE bytes
``writer``      ``wrap_write(write, ctx) -> write``                  how bytes reach the socket
``headers``     ``alter_headers(headers, ctx) -> headers``           response headers
``response``    ``alter_response(body, ctx) -> body``                a whole non-streamed body
                                                                     (``/v1/models``)
``error``       ``alter_error(reply, ctx) -> ErrorReply``            an error answer
==============  ===================================================  ==========================

A fault never touches the engine: to change the generated text it changes the parameters the
engine is handed (``body``) or the rendered output.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from spec import JSON

from ..contracts import Operation
from ..errors import ApiError
from ..sse import Frame
from ..wire.formats import WIRES, Wire

HookKind = Literal[
    "validation", "body", "payload", "chunks", "frames", "writer", "headers", "response", "error"
]
HOOK_METHODS: Mapping[HookKind, str] = {
    "validation": "judge",
    "body": "alter_body",
    "payload": "alter_payload",
    "chunks": "alter_chunks",
    "frames": "alter_frames",
    "writer": "wrap_write",
    "headers": "alter_headers",
    "response": "alter_response",
    "error": "alter_error",
}
Write = Callable[[bytes], Awaitable[None]]
OPENAI: frozenset[Wire] = frozenset({"openai"})
FRIENDLI: frozenset[Wire] = frozenset({"friendli"})


class AbortConnection(Exception):
    """Raised by a ``writer`` fault: the server drops the connection without finishing."""


@dataclass
class FaultContext:
    """What a hook may know about the request it is bending.

    ``body`` is the request body as received (None before it was parsed); ``stream`` whether
    it asked to stream. ``client_gone`` tells a ``writer`` hook the client has left.
    ``memory`` is the server's scratch space for the few faults whose defect spans requests
    (one dict per server, keyed by fault name; a fresh one when no server hands it over).
    """

    wire: Wire
    operation: Operation = "completions"
    body: Mapping[str, JSON] | None = None
    stream: bool = False
    client_gone: Callable[[], bool] = lambda: False
    memory: dict[str, object] = field(default_factory=dict)
    _rng: random.Random | None = field(default=None, repr=False)

    @property
    def rng(self) -> random.Random:
        """A random generator for faults that need fresh randomness (made on first use)."""
        if self._rng is None:
            self._rng = random.Random()
        return self._rng

    def value_of(self, name: str) -> JSON:
        return self.body.get(name) if isinstance(self.body, Mapping) else None

    @property
    def n(self) -> int:
        value = self.value_of("n")
        return value if isinstance(value, int) and not isinstance(value, bool) else 1

    @property
    def prompt_count(self) -> int:
        """How many prompts the body holds (token-id lists count as one prompt each)."""
        prompt = self.value_of("prompt")
        if isinstance(prompt, list) and prompt and not isinstance(prompt[0], int):
            return len(prompt)
        return 1

    @property
    def stops(self) -> tuple[str, ...]:
        stop = self.value_of("stop")
        if isinstance(stop, str):
            return (stop,)
        return tuple(s for s in stop if isinstance(s, str)) if isinstance(stop, list) else ()

    @property
    def logprobs(self) -> int | None:
        value = self.value_of("logprobs")
        return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Verdict:
    """The outcome of validation: the body to serve, or the error to answer with."""

    body: JSON
    error: ApiError | None = None


@dataclass(frozen=True)
class ErrorReply:
    """An error answer as bytes, before it is sent (``error`` hooks rewrite it)."""

    status: int
    content_type: str
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)
    error: ApiError | None = None


class Fault:
    """Base of every fault; see the module docstring for the hooks.

    Class attributes: ``name`` (kebab-case, after the defect), ``description`` (one line),
    ``breaks`` (the contract rule it breaks, in words), ``hook``; ``wires``, ``stream``
    (True: streams only, False: non-streamed only, None: both) and ``operation`` say where
    it applies; ``on_invalid`` marks faults that only show on invalid input; ``chaos`` False
    keeps a fault out of the default chaos pool (it makes the client wait for a timeout).
    """

    name: ClassVar[str]
    description: ClassVar[str]
    breaks: ClassVar[str]
    hook: ClassVar[HookKind]
    wires: ClassVar[frozenset[Wire]] = frozenset(WIRES)
    stream: ClassVar[bool | None] = None
    operation: ClassVar[Operation] = "completions"
    on_invalid: ClassVar[bool] = False
    chaos: ClassVar[bool] = True

    def applies(self, ctx: FaultContext) -> bool:
        """Whether this fault bends a request like ``ctx`` at all."""
        return (
            ctx.operation == self.operation
            and ctx.wire in self.wires
            and (self.stream is None or self.stream == ctx.stream)
        )

    def describe(self) -> dict[str, JSON]:
        """The catalog entry served at ``GET /mock/faults``."""
        return {
            "name": self.name,
            "description": self.description,
            "breaks": self.breaks,
            "hook": self.hook,
            "wires": sorted(self.wires),
            "stream": self.stream,
            "operation": self.operation,
        }

    # -- the hooks (identity by default; a fault overrides exactly one) -----------------

    def judge(self, verdict: Verdict, ctx: FaultContext) -> Verdict:
        return verdict

    def alter_body(self, body: dict[str, JSON], ctx: FaultContext) -> dict[str, JSON]:
        return body

    def alter_payload(self, payload: dict[str, JSON], ctx: FaultContext) -> dict[str, JSON] | None:
        return payload

    def alter_chunks(
        self, chunks: Iterator[dict[str, JSON]], ctx: FaultContext
    ) -> Iterator[dict[str, JSON]]:
        return chunks

    def alter_frames(self, frames: Iterator[Frame], ctx: FaultContext) -> Iterator[Frame]:
        return frames

    def wrap_write(self, write: Write, ctx: FaultContext) -> Write:
        return write

    def alter_headers(self, headers: dict[str, str], ctx: FaultContext) -> dict[str, str]:
        return headers

    def alter_response(self, body: JSON, ctx: FaultContext) -> JSON:
        return body

    def alter_error(self, reply: ErrorReply, ctx: FaultContext) -> ErrorReply:
        return reply
