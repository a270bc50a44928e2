"""A total deadline for one fuzz request, the status line and headers included.

``requests``' timeout bounds each socket read, never the whole answer: a server that drips one
byte every few seconds holds a request for as long as it likes, and one that floods ``100
Continue`` interim responses keeps ``http.client`` reading status lines forever, at full CPU,
without a single read timing out. So each request runs under a :class:`Watch`: a timer that, at
the deadline, shuts the request's socket down. Every read blocked on it then returns at once
(end of file), wherever it is: in ``http.client``'s loop over interim responses, in its header
parser, or in the body. The connection learns its socket from :func:`current` when it reads
the answer (:class:`WatchedHTTPConnection`), so the watch reaches the header phase too, which
nothing above urllib3 can.
"""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType

from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.poolmanager import PoolManager

_local = threading.local()


class Watch:
    """Shuts the current request's socket down ``seconds`` after it is entered.

    ``budget``: the deadline is the run's time budget rather than the request's own limit
    (the run ends there; the server is not at fault).
    """

    def __init__(self, seconds: float, *, budget: bool = False) -> None:
        if not seconds > 0:
            raise ValueError(f"seconds must be positive, got {seconds}")
        self.seconds = seconds
        self.budget = budget
        self.expired = False
        self.reused: bool | None = None
        """Whether the request went out on a kept-alive connection that had carried an earlier
        request (set by :class:`WatchedHTTPConnection`); None until it is sent."""
        self._done = False
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._outer: Watch | None = None
        self.started = time.monotonic()
        """When the request began (entering the watch): what arrival times count from."""

    def __enter__(self) -> Watch:
        self.started = time.monotonic()
        self._outer = current()
        _local.watch = self
        self._timer.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self._timer.cancel()
        with self._lock:  # a timer firing now must not shut a socket the pool hands on
            self._done, self._sock = True, None
        _local.watch = self._outer

    def attach(self, sock: socket.socket) -> None:
        """Watch ``sock`` (the connection's, once the request is sent); shut it down at once
        when the deadline has passed already."""
        with self._lock:
            if self._done:
                return
            self._sock = sock
            if self.expired:
                _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            if self._done:
                return
            self.expired = True
            if self._sock is not None:
                _shut(self._sock)


def _shut(sock: socket.socket) -> None:
    """End both directions of ``sock`` at the descriptor (under TLS too): a read blocked on it
    returns."""
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass  # closed already


def current() -> Watch | None:
    """The watch of the request this thread is sending, if any."""
    return getattr(_local, "watch", None)


def _attach_current(sock: socket.socket | None) -> None:
    watch = current()
    if watch is not None and sock is not None:
        watch.attach(sock)


class _Reuse:
    """Tells the current :class:`Watch` whether its request goes out on a reused connection:
    one whose socket carried a request before (urllib3 keeps the connection object when a
    dropped socket is replaced, so the count starts again at each ``connect``)."""

    sock: socket.socket | None
    carried = 0
    """Requests sent on the current socket."""

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        self.carried = 0

    def request(self, *args: object, **kwargs: object) -> None:
        watch = current()
        if watch is not None:
            watch.reused = self.sock is not None and self.carried > 0
        super().request(*args, **kwargs)  # type: ignore[misc]
        self.carried += 1


class WatchedHTTPConnection(_Reuse, HTTPConnection):
    """urllib3's connection, its socket handed to the current :class:`Watch` before the answer
    is read, and whether it was reused told to the watch."""

    def getresponse(self):  # type: ignore[no-untyped-def]  # urllib3's own signature
        _attach_current(self.sock)
        return super().getresponse()


class WatchedHTTPSConnection(_Reuse, HTTPSConnection):
    """:class:`WatchedHTTPConnection` over TLS."""

    def getresponse(self):  # type: ignore[no-untyped-def]
        _attach_current(self.sock)
        return super().getresponse()


class WatchedHTTPConnectionPool(HTTPConnectionPool):
    ConnectionCls = WatchedHTTPConnection


class WatchedHTTPSConnectionPool(HTTPSConnectionPool):
    ConnectionCls = WatchedHTTPSConnection


def watch_pools(manager: object) -> None:
    """Make ``manager`` (a urllib3 pool or proxy manager) open watched connections."""
    if isinstance(manager, PoolManager):
        manager.pool_classes_by_scheme = {"http": WatchedHTTPConnectionPool,
                                          "https": WatchedHTTPSConnectionPool}
