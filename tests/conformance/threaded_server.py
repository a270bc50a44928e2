"""A ``http.server`` handler served on loopback, one thread per connection: the server the tests
write as a handler class (a canned answer, a relay, a server that never answers), where
:mod:`raw_server` is for bytes no HTTP framework would send."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
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
