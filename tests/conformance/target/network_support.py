"""What the TLS and proxy tests build on loopback: a private CA and a forward proxy.

:class:`TLSKit` is a private CA made with ``trustme`` and the files a test passes around: the
CA bundle, a server certificate for ``127.0.0.1`` / ``localhost`` and a client certificate.
:class:`LoopbackProxy` is a small forward proxy (``CONNECT`` tunnels for HTTPS, absolute-form
requests for HTTP) that records where each client asked to go, and can demand credentials
(407 without them): it is how a test sees whether a client went through the proxy at all.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import trustme

from conformance.target.embedded import EmbeddedMock


@dataclass(frozen=True)
class TLSKit:
    """A private CA's files in ``directory``: ``ca`` (the bundle), the server's and a client's
    certificate and key."""

    directory: Path

    @property
    def ca(self) -> str:
        return str(self.directory / "ca.pem")

    @property
    def server_cert(self) -> str:
        return str(self.directory / "server.pem")

    @property
    def server_key(self) -> str:
        return str(self.directory / "server.key")

    @property
    def client_cert(self) -> str:
        return str(self.directory / "client.pem")

    @property
    def client_key(self) -> str:
        return str(self.directory / "client.key")

    @classmethod
    def make(cls, directory: Path) -> TLSKit:
        ca = trustme.CA()
        kit = cls(directory)
        ca.cert_pem.write_to_path(kit.ca)
        server = ca.issue_cert("127.0.0.1", "localhost")
        server.private_key_pem.write_to_path(kit.server_key)
        server.cert_chain_pems[0].write_to_path(kit.server_cert)
        for extra in server.cert_chain_pems[1:]:
            extra.write_to_path(kit.server_cert, append=True)
        client = ca.issue_cert("client@conformance.test")
        client.private_key_pem.write_to_path(kit.client_key)
        client.cert_chain_pems[0].write_to_path(kit.client_cert)
        return kit

    def mock(self, *args: str) -> EmbeddedMock:
        """The mock over HTTPS with the kit's server certificate (not started)."""
        return EmbeddedMock(["--tls-cert", self.server_cert, "--tls-key", self.server_key,
                             *args])


@dataclass
class LoopbackProxy:
    """A forward proxy on 127.0.0.1; ``targets`` lists ``host:port`` each client asked for."""

    credentials: tuple[str, str] | None = None
    targets: list[str] = field(default_factory=list)
    refused: int = 0
    """Requests answered 407 (no or wrong ``Proxy-Authorization``)."""
    port: int = 0
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url_with_credentials(self) -> str:
        if self.credentials is None:
            return self.url
        user, password = self.credentials
        return f"http://{user}:{password}@127.0.0.1:{self.port}"

    def _authorized(self, headers: list[bytes]) -> bool:
        if self.credentials is None:
            return True
        token = base64.b64encode(":".join(self.credentials).encode()).decode()
        wanted = f"proxy-authorization: basic {token}".lower()
        return any(line.decode("latin-1").strip().lower() == wanted for line in headers)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            writer.close()
            return
        lines = head.split(b"\r\n")
        method, target, version = lines[0].decode("latin-1").split(" ", 2)
        headers = [line for line in lines[1:] if line]
        if not self._authorized(headers):
            self.refused += 1
            writer.write(b"HTTP/1.1 407 Proxy Authentication Required\r\n"
                         b"Proxy-Authenticate: Basic realm=\"loopback\"\r\n"
                         b"Content-Length: 0\r\nConnection: close\r\n\r\n")
            await writer.drain()
            writer.close()
            return
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            first = b""
        else:
            parts = urlsplit(target)
            host, port = parts.hostname or "", str(parts.port or 80)
            path = parts.path + (f"?{parts.query}" if parts.query else "")
            kept = [h for h in headers if not h.lower().startswith(b"proxy-")]
            first = b"\r\n".join([f"{method} {path or '/'} {version}".encode(), *kept]) + (
                b"\r\n\r\n")
        self.targets.append(f"{host.strip('[]')}:{port}")
        try:
            up_reader, up_writer = await asyncio.open_connection(host.strip("[]"), int(port))
        except OSError:
            writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n"
                         b"Connection: close\r\n\r\n")
            await writer.drain()
            writer.close()
            return
        if method == "CONNECT":
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            up_writer.write(first)
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    def start(self) -> LoopbackProxy:
        ready = threading.Event()

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            server = loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0))
            self.port = server.sockets[0].getsockname()[1]
            ready.set()
            loop.run_forever()
            server.close()
            loop.run_until_complete(server.wait_closed())
            for task in asyncio.all_tasks(loop):
                task.cancel()
            loop.run_until_complete(asyncio.sleep(0))
            loop.close()

        self._thread = threading.Thread(target=serve, daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


@contextlib.contextmanager
def loopback_proxy(credentials: tuple[str, str] | None = None) -> Iterator[LoopbackProxy]:
    proxy = LoopbackProxy(credentials=credentials).start()
    try:
        yield proxy
    finally:
        proxy.stop()
