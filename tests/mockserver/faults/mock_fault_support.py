"""Shared helpers of the fault tests: the scenario registry and request helpers.

Each scenario sends one request with ``X-Mock-Fault: <name>`` (and usually the same request
without it) and asserts the specific defect.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

from mock_live import MODEL, LiveServer, Reply

OPENAI = "/v1/completions"
FRIENDLI = "/dedicated/v1/completions"
Scenario = Callable[[LiveServer], None]
SCENARIOS: dict[str, Scenario] = {}


def scenario(name: str) -> Callable[[Scenario], Scenario]:
    def register(func: Scenario) -> Scenario:
        assert name not in SCENARIOS
        SCENARIOS[name] = func
        return func

    return register


def body(**fields: Any) -> dict[str, Any]:
    return {"model": MODEL, "prompt": "The Python language", "max_tokens": 4, "seed": 11,
            **fields}


def streamed(**fields: Any) -> dict[str, Any]:
    return body(stream=True, stream_options={"include_usage": True}, **fields)


def send(live: LiveServer, fault: str | None, payload: dict[str, Any], path: str = OPENAI,
         **kwargs: Any) -> Reply:
    headers = {"X-Mock-Fault": fault} if fault else {}
    return live.post(path, payload, headers=headers, **kwargs)


def both(live: LiveServer, fault: str, payload: dict[str, Any],
         path: str = OPENAI) -> tuple[Reply, Reply]:
    """The clean answer, then the faulty one."""
    return send(live, None, payload, path), send(live, fault, payload, path)


def chunk_list(reply: Reply) -> list[dict[str, Any]]:
    return [c for c in reply.chunks() if c != "[DONE]"]


def finish_positions(chunks: list[dict[str, Any]]) -> list[int]:
    return [i for i, c in enumerate(chunks)
            if any(ch.get("finish_reason") is not None for ch in c["choices"])]


def usage_positions(chunks: list[dict[str, Any]]) -> list[int]:
    return [i for i, c in enumerate(chunks) if c["choices"] == [] and c.get("usage")]


def stream_text(reply: Reply, index: int = 0) -> str:
    return "".join(ch["text"] for c in chunk_list(reply) for ch in c["choices"]
                   if ch["index"] == index)


def stop_case(live: LiveServer) -> dict[str, Any]:
    """A greedy request whose text contains a stop string (chosen from the clean text)."""
    free = send(live, None, body(temperature=0, max_tokens=20)).json()["choices"][0]["text"]
    return body(temperature=0, max_tokens=20, stop=[free[4:7]])


def raw_exchange(live: LiveServer, payload: bytes, fault: str,
                 timeout: float) -> tuple[int, bytes]:
    """Send a request on a raw socket; count the reads and collect the body until EOF or timeout."""
    head = (f"POST {OPENAI} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"X-Mock-Fault: {fault}\r\nContent-Length: {len(payload)}\r\nConnection: close\r\n\r\n")
    reads, received = 0, b""
    with socket.create_connection(("127.0.0.1", live.port)) as sock:
        sock.settimeout(timeout)
        sock.sendall(head.encode() + payload)
        try:
            while data := sock.recv(65536):
                reads += 1
                received += data
        except TimeoutError:
            pass
    _, _, body_bytes = received.partition(b"\r\n\r\n")
    return reads, _dechunk(body_bytes)


def _dechunk(data: bytes) -> bytes:
    out = b""
    while data:
        size_line, _, rest = data.partition(b"\r\n")
        size = int(size_line or b"0", 16)
        if size == 0:
            break
        out += rest[:size]
        data = rest[size + 2:]
    return out


def module_scenarios(module: str) -> list[str]:
    """The scenario names registered by one test module."""
    return sorted(name for name, func in SCENARIOS.items() if func.__module__ == module)
