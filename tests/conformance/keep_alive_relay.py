"""A keep-alive HTTP/1.1 front for the mock that drops requests on its connections, the way a
server closing idle keep-alive connections does (real HTTP on loopback, a thread per
connection).

Each connection's first request is relayed to ``Relay.upstream`` (or answered ``{}`` with no
upstream) and answered with ``Content-Length`` and no ``Connection: close``. What happens to a
further request on the same connection, a *reused* one, depends on ``Relay.mode``:

- ``"idle-close"``: closed unanswered (a server closing an idle connection as the request
  went out);
- ``"every-second"``: every second request the server receives (counted server-wide) that
  arrives on a reused connection is closed unanswered, the others relayed: a
  dropped request then meets a connection pool that also holds working connections;
- ``"partial"``: answered with a status line only, then closed (an answer begun, not a race);
- ``"once"``: the first request the server receives is answered, every later one, on any
  connection, is closed unanswered (a server that broke after its first answer);
- ``"reset"``: every request, on any connection, is reset (TCP RST) unanswered;
- ``"pass"``: every request is relayed.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import struct
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import ClassVar
from urllib.parse import urlsplit

from threaded_server import serving

from conformance.target.embedded import EmbeddedMock

MODES = ("idle-close", "every-second", "partial", "once", "reset", "pass")


class Relay(BaseHTTPRequestHandler):
    """The front; class attributes are the running relay's mode and what it saw."""

    protocol_version = "HTTP/1.1"
    upstream: ClassVar[tuple[str, int] | None] = None
    mode: ClassVar[str] = "idle-close"
    dropped: ClassVar[list[str]] = []
    relayed: ClassVar[list[str]] = []
    received: ClassVar[int] = 0
    lock: ClassVar[threading.Lock] = threading.Lock()
    HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length"})

    def setup(self) -> None:
        super().setup()
        self.served = 0

    def __getattr__(self, name: str) -> object:
        if name.startswith("do_"):
            return self._relay
        raise AttributeError(name)

    def _drops(self) -> bool:
        with Relay.lock:
            Relay.received += 1
            nth = Relay.received
        if self.mode == "reset":
            return True
        if self.mode == "once":
            return nth > 1
        if self.served == 0 or self.mode == "pass":
            return False
        return self.mode != "every-second" or nth % 2 == 0

    def _relay(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self._drops():
            Relay.dropped.append(self.path)
            if self.mode == "reset":  # RST rather than FIN: ConnectionResetError
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                           struct.pack("ii", 1, 0))
                self.connection.close()
            elif self.mode == "partial":
                self.wfile.write(b"HTTP/1.1 200 OK\r\n")
                self.wfile.flush()
            self.close_connection = True
            return
        self.served += 1
        if self.upstream is None:
            Relay.relayed.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")
            return
        upstream = http.client.HTTPConnection(*self.upstream, timeout=30)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in self.HOP}
        upstream.request(self.command, self.path, body=body or None, headers=headers)
        answer = upstream.getresponse()
        content = b"" if self.command == "HEAD" else answer.read()
        upstream.close()
        Relay.relayed.append(self.path)
        self.send_response(answer.status, answer.reason)
        for name, value in answer.getheaders():
            if name.lower() not in self.HOP:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)

    def log_message(self, *args: object) -> None:
        pass


def _reset(mode: str, upstream: tuple[str, int] | None) -> None:
    if mode not in MODES:
        raise ValueError(f"unknown relay mode {mode!r}")
    Relay.upstream, Relay.mode = upstream, mode
    Relay.dropped, Relay.relayed, Relay.received = [], [], 0


@contextlib.contextmanager
def relay(mock: EmbeddedMock, mode: str) -> Iterator[str]:
    """The relay on 127.0.0.1 in front of ``mock``; yields its OpenAI base URL."""
    target = urlsplit(mock.openai_url)
    _reset(mode, (target.hostname or "127.0.0.1", target.port or 80))
    with serving(Relay) as url:
        yield f"{url}{target.path}"


@contextlib.contextmanager
def relay_alone(mode: str) -> Iterator[str]:
    """The relay with no upstream: each request it does not drop is answered ``{}``; yields
    its ``http://127.0.0.1:PORT``."""
    _reset(mode, None)
    with serving(Relay) as url:
        yield url
