"""Real mock servers on loopback for the tests, and a small raw HTTP client.

``LiveServer`` runs ``create_app(config)`` on its own event loop in a background thread, so
sync clients (``http.client``, the ``openai`` client, schemathesis) talk to it over TCP like to
any server. ``call`` keeps the raw bytes of the answer, because framing faults are about bytes.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from mockserver import MockConfig, create_app
from mockserver.serve import runner_options
from reference_engine import Engine

ENGINE = Engine()
ENGINE.load()
MODEL = ENGINE.model_id


class LiveServer:
    """``create_app(config)`` served on 127.0.0.1 (a free port) from a background thread."""

    def __init__(self, config: MockConfig | None = None, *, app: web.Application | None = None):
        self.config = config or MockConfig()
        self.app = app if app is not None else create_app(self.config, engine=ENGINE)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.runner: web.AppRunner | None = None
        self.port = 0

    def __enter__(self) -> LiveServer:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(timeout=30)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.runner is not None:
            asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(timeout=30)
            asyncio.run_coroutine_threadsafe(_finish_tasks(), self.loop).result(timeout=30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=30)
        self.loop.close()

    async def _start(self) -> None:
        options = {**runner_options(self.config), "shutdown_timeout": 1.0}
        self.runner = web.AppRunner(self.app, **options)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.port = int(self.runner.addresses[0][1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def call(self, method: str, path: str, body: Any = None, *, raw: bytes | None = None,
             headers: Mapping[str, str] | None = None, timeout: float = 30.0) -> Reply:
        return call(self.port, method, path, body, raw=raw, headers=headers, timeout=timeout)

    def post(self, path: str, body: Any = None, **kwargs: Any) -> Reply:
        return self.call("POST", path, body, **kwargs)


async def _finish_tasks() -> None:
    """Cancel what cleanup left (a connection still lingering after a 413) and let it end, so
    that no task is destroyed pending when the loop closes."""
    tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    data: bytes
    complete: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    def json(self) -> Any:
        return json.loads(self.data)

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")

    def events(self) -> list[str]:
        """SSE event data (WHATWG rules: data lines joined by newline; no blank line, no event)."""
        return sse_events(self.data)

    def chunks(self) -> list[Any]:
        """Each event's data parsed as JSON, except ``[DONE]`` which stays a string."""
        return [e if e == "[DONE]" else json.loads(e) for e in self.events()]

    @property
    def error(self) -> dict[str, Any]:
        return self.json()["error"]


def sse_events(data: bytes) -> list[str]:
    events: list[str] = []
    lines: list[str] = []
    text = data.decode("utf-8")
    for line in text.replace("\r\n", "\n").split("\n")[:-1]:  # an unterminated line is dropped
        if line == "":
            if lines:
                events.append("\n".join(lines))
            lines = []
        elif line.startswith("data:"):
            value = line[5:]
            lines.append(value[1:] if value.startswith(" ") else value)
    return events


def call(port: int, method: str, path: str, body: Any = None, *, raw: bytes | None = None,
         headers: Mapping[str, str] | None = None, timeout: float = 30.0) -> Reply:
    """One request on a fresh connection; an answer cut short is returned with complete=False."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    sent = dict(headers or {})
    payload = raw
    if body is not None:
        payload = json.dumps(body).encode("utf-8")
        sent.setdefault("Content-Type", "application/json")
    try:
        connection.request(method, path, body=payload, headers=sent)
        response = connection.getresponse()
        complete = True
        try:
            data = response.read()
        except http.client.IncompleteRead as error:
            data, complete = error.partial, False
        return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, data,
                     complete)
    finally:
        connection.close()
