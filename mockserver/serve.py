"""Running one server process: bind, announce readiness, serve until SIGINT or SIGTERM."""

from __future__ import annotations

import asyncio
import signal
import socket
import ssl
from collections.abc import Callable
from typing import Any

from aiohttp import web

from procutil import heap

from .app import create_app
from .config import MockConfig
from .contracts import BUILT_IN
from .logs import ACCESS_LOGGER, AccessLog, quiet_protocol_noise

READY_FORMAT = ("mockserver: serving {scheme}://{host}:{port}/v1 "
                "(FriendliAI: {scheme}://{host}:{port}/dedicated/v1)")
SHUTDOWN_TIMEOUT = 3.0
"""Seconds SIGTERM waits for requests in flight before cancelling them (the whole stop stays
under 5 s)."""


class TLSError(Exception):
    """``--tls-cert`` / ``--tls-key`` could not be loaded (the message names them)."""


def ready_line(host: str, port: int, *, scheme: str = "http",
               config: MockConfig | None = None) -> str:
    """The one line the CLI prints when it accepts connections (the harness parses it); each
    ``--profile`` adds `` (profile NAME: URL)``."""
    shown = f"[{host}]" if ":" in host else host
    line = READY_FORMAT.format(scheme=scheme, host=shown, port=port)
    for contract in config.contracts()[len(BUILT_IN):] if config is not None else ():
        line += f" (profile {contract.name}: {scheme}://{shown}:{port}{contract.base_path})"
    return line


def tls_context(config: MockConfig) -> ssl.SSLContext | None:
    """The server's TLS context for ``--tls-cert`` / ``--tls-key``; None for plain HTTP.

    With ``--tls-client-ca`` it requires a client certificate that CA signed (mutual TLS);
    without, it asks for none."""
    if not config.tls_cert:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(config.tls_cert, config.tls_key)
        if config.tls_client_ca:
            context.load_verify_locations(cafile=config.tls_client_ca)
            context.verify_mode = ssl.CERT_REQUIRED
    except (OSError, ssl.SSLError) as error:
        files = " / ".join(f"{flag} {value!r}" for flag, value in (
            ("--tls-cert", config.tls_cert), ("--tls-key", config.tls_key),
            ("--tls-client-ca", config.tls_client_ca)) if value)
        raise TLSError(f"cannot load {files}: {error}") from None
    return context


def reuseport_socket(host: str, port: int, *, listen: bool = True) -> socket.socket:
    """A TCP socket bound with SO_REUSEPORT (Linux), so several processes can share the port."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    if listen:
        sock.listen(4096)
    sock.setblocking(False)
    return sock


async def serve(
    config: MockConfig,
    *,
    sock: socket.socket | None = None,
    on_ready: Callable[[str, int], None] | None = None,
    app: web.Application | None = None,
    ssl_context: ssl.SSLContext | None = None,
) -> None:
    """Serve ``app`` (default ``create_app(config)``) on ``sock`` (or host:port) until SIGINT /
    SIGTERM; over TLS with ``ssl_context``, else with ``config``'s ``--tls-cert``."""
    context = ssl_context if ssl_context is not None else tls_context(config)
    quiet_protocol_noise()
    heap.fix_mmap_threshold()
    runner = web.AppRunner(app if app is not None else create_app(config),
                           handle_signals=False, **runner_options(config))
    await runner.setup()
    site: web.BaseSite
    if sock is not None:
        site = web.SockSite(runner, sock, backlog=4096, ssl_context=context)
    else:
        site = web.TCPSite(runner, config.host, config.port, backlog=4096, ssl_context=context)
    await site.start()
    host, port = _bound_address(runner, config)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        if on_ready is not None:
            on_ready(host, port)
        await stop.wait()
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
        await runner.cleanup()


def runner_options(config: MockConfig) -> dict[str, Any]:
    """aiohttp runner settings: the access log, the idle deadline, the shutdown grace."""
    return {
        "access_log_class": AccessLog,
        "access_log": ACCESS_LOGGER,
        "keepalive_timeout": config.idle_timeout,
        "shutdown_timeout": SHUTDOWN_TIMEOUT,
    }


def _bound_address(runner: web.AppRunner, config: MockConfig) -> tuple[str, int]:
    for address in runner.addresses:
        if isinstance(address, tuple):
            return str(address[0]), int(address[1])
    return config.host, config.port
