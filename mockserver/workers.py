"""Scale-out: N worker processes sharing one port.

With gunicorn installed (the optional extra ``workers``) the workers are gunicorn's, running
``aiohttp.GunicornWebWorker``; each builds its own ``AppRunner`` with the single-process
settings (``serve.runner_options``), so its access log is the mock's structured one
(``logs.AccessLog``, text or JSON as ``--log-format`` says), not gunicorn's. Without it, the
parent forks N children that each bind the port with ``SO_REUSEPORT`` (Linux), so the kernel
spreads connections over them; the parent keeps a bound (not listening) socket to hold the
port, reports readiness once every child listens, and forwards SIGINT / SIGTERM. The mock
keeps no state between requests except its rate-limit buckets, which are per process (see
``mockserver/README.md``).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import signal
import sys
from collections.abc import Callable
from typing import Any, Literal

from aiohttp import web

from procutil import heap

from .app import create_app
from .config import MockConfig
from .logs import quiet_protocol_noise
from .serve import ready_line, reuseport_socket, runner_options, serve

Backend = Literal["auto", "gunicorn", "fork"]
READY_TIMEOUT = 60.0


def gunicorn_available() -> bool:
    try:
        import gunicorn  # noqa: F401
    except ImportError:
        return False
    return True


def run_workers(config: MockConfig, *, backend: Backend = "auto",
                announce: Callable[[str], None]) -> int:
    """Run ``config.workers`` processes until SIGINT / SIGTERM; return the exit status."""
    if backend == "gunicorn" or (backend == "auto" and gunicorn_available()):
        return _run_gunicorn(config, announce)
    return _run_forked(config, announce)


# -- fork + SO_REUSEPORT ------------------------------------------------------------------


def _run_forked(config: MockConfig, announce: Callable[[str], None]) -> int:
    holder = reuseport_socket(config.host, config.port, listen=False)
    port = holder.getsockname()[1]
    ready_read, ready_write = os.pipe()
    children: list[int] = []
    for _ in range(config.workers):
        pid = os.fork()
        if pid == 0:  # child
            os.close(ready_read)
            holder.close()
            _child(config, port, ready_write)
        children.append(pid)
    os.close(ready_write)
    stopping = False

    def forward(signum: int, _frame: Any) -> None:
        nonlocal stopping
        stopping = True
        for child in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGTERM)

    signal.signal(signal.SIGINT, forward)
    signal.signal(signal.SIGTERM, forward)
    if _wait_ready(ready_read, config.workers):
        announce(ready_line(config.host, port, config=config))
    else:
        print("mockserver: a worker failed to start", file=sys.stderr, flush=True)
        forward(signal.SIGTERM, None)
    status = 0
    for child in children:
        _, code = os.waitpid(child, 0)
        if os.waitstatus_to_exitcode(code) not in (0, -signal.SIGTERM) and not stopping:
            status = 1
    holder.close()
    return status


def _wait_ready(fd: int, count: int) -> bool:
    received = 0
    with os.fdopen(fd, "rb", buffering=0) as pipe:
        while received < count:
            data = pipe.read(count - received)
            if not data:
                return False
            received += len(data)
    return True


def _child(config: MockConfig, port: int, ready_fd: int) -> None:
    """A worker: serve on its own SO_REUSEPORT socket; never returns."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent forwards SIGTERM
    code = 0
    try:
        sock = reuseport_socket(config.host, port)

        def ready(_host: str, _port: int) -> None:
            os.write(ready_fd, b"r")
            os.close(ready_fd)

        asyncio.run(serve(config, sock=sock, on_ready=ready))
    except BaseException:
        code = 1
    finally:
        os._exit(code)


# -- gunicorn -----------------------------------------------------------------------------


def _run_gunicorn(config: MockConfig, announce: Callable[[str], None]) -> int:
    from gunicorn.app.base import BaseApplication

    def when_ready(server: Any) -> None:
        host, port = server.LISTENERS[0].sock.getsockname()[:2]
        announce(ready_line(str(host), int(port), config=config))

    class MockApplication(BaseApplication):  # type: ignore[misc]
        def load_config(self) -> None:
            settings = {
                "bind": f"[{config.host}]:{config.port}" if ":" in config.host
                else f"{config.host}:{config.port}",
                "workers": config.workers,
                "worker_class": "aiohttp.GunicornWebWorker",
                "accesslog": None,  # the runner logs access itself (``worker_runner``)
                # --idle-timeout for gunicorn's own bookkeeping (it takes whole seconds); the
                # runner applies the exact value
                "keepalive": max(1, math.ceil(config.idle_timeout)),
                "graceful_timeout": 5,
                "when_ready": when_ready,
                "loglevel": "warning",
            }
            for key, value in settings.items():
                self.cfg.set(key, value)

        def load(self) -> Any:
            async def factory() -> web.AppRunner:  # the worker wants a coroutine function
                return await worker_runner(config)

            return factory

    MockApplication().run()
    return 0


async def worker_runner(config: MockConfig) -> web.AppRunner:
    """A gunicorn worker's runner, set up as ``serve`` sets up its own.

    ``GunicornWebWorker`` accepts an async factory returning an ``AppRunner`` and then uses
    it as given; left to build its own, it passes gunicorn's access logger (or none:
    ``accesslog: None``) and the mock's requests went unlogged with ``--workers N``.
    """
    quiet_protocol_noise()
    heap.fix_mmap_threshold()
    return web.AppRunner(create_app(config), handle_signals=False, **runner_options(config))
