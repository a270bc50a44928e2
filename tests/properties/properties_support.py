"""Helpers of the property tests: deterministic bodies, and streams folded into choices."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from conformance.sse import SSEParser


def deterministic(body: dict[str, Any], seed: int) -> dict[str, Any]:
    """``body`` that samples the same way every time (seeded), and can stream (no best_of)."""
    body = dict(body)
    if body.get("seed") is None:
        body["seed"] = seed
    if isinstance(body.get("best_of"), int) and body["best_of"] > 1:
        body.pop("best_of")
    body.pop("stream", None)
    body.pop("stream_options", None)
    return body


@dataclass
class Folded:
    """A stream's choices as a client assembles them."""

    texts: dict[int, str] = field(default_factory=dict)
    finish: dict[int, str] = field(default_factory=dict)
    tokens: dict[int, list[str]] = field(default_factory=dict)
    usage: dict[str, int] | None = None
    done: bool = False


def fold_sse(content: bytes) -> Folded:
    parser = SSEParser()
    events = parser.feed(content, 0.0)
    parser.close(0.0)
    folded = Folded()
    for event in events:
        if event.data == "[DONE]":
            folded.done = True
            continue
        chunk = json.loads(event.data)
        if chunk.get("usage"):
            folded.usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            index = choice["index"]
            folded.texts[index] = folded.texts.get(index, "") + choice["text"]
            if choice.get("finish_reason"):
                folded.finish[index] = choice["finish_reason"]
            logprobs = choice.get("logprobs")
            if logprobs:
                folded.tokens.setdefault(index, []).extend(logprobs["tokens"])
    return folded


def stops_of(body: dict[str, Any]) -> list[str]:
    stop = body.get("stop")
    if isinstance(stop, str):
        return [stop]
    return [s for s in stop or [] if isinstance(s, str)]
