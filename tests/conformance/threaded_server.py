"""Test servers on loopback in a thread, one thread per connection: a ``http.server`` handler
(:func:`serving`: a canned answer, a relay, a server that never answers) or a blocking function
of the raw socket (:func:`serving_sockets`: a flood, a drip, a close without a word), for tests
that call the harness synchronously; :mod:`raw_server` is the asyncio one, for async tests."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextlib.contextmanager
def serving(handler: type[BaseHTTPRequestHandler], path: str = "") -> Iterator[str]:
    """``handler`` as a real HTTP server on 127.0.0.1; yields ``http://127.0.0.1:PORT`` and
    ``path`` after it, and shuts the server down after (its threads are daemons, so a handler
    still blocked in a read does not hold the test up)."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}{path}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@contextlib.contextmanager
def serving_sockets(handle: Callable[[socket.socket], None]) -> Iterator[int]:
    """A raw TCP listener on 127.0.0.1 handing each connection to ``handle`` in a thread of its
    own (the socket closed after, an ``OSError`` of a client gone swallowed); yields the port.
    On exit it stops accepting; a handler still flooding ends when its client has closed."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def run(conn: socket.socket) -> None:
        with contextlib.suppress(OSError), conn:
            handle(conn)

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:  # the accept timed out (or the listener is closed): look at stop
                continue
            threading.Thread(target=run, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield int(listener.getsockname()[1])
    finally:
        stop.set()
        thread.join(5)
        listener.close()
