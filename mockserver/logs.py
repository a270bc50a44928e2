"""What the mock logs, and how: one access line per request, quiet protocol noise, text or JSON.

A mock sits in front of careless and hostile clients all day; its log must tell a bug from a
client that went away. So:

- every answered (or abandoned) request gets one access line on the ``mockserver.access``
  logger at INFO: method, path, status, bytes, duration and the faults applied
  (:class:`AccessLog`, given to aiohttp's runner as its ``access_log_class``);
- requests aiohttp's HTTP parser rejects (garbage on the port, a header without a colon) are
  one WARNING line without a traceback (:class:`ProtocolNoise`), not an ERROR with one: they
  are the client's fault and aiohttp already answered 400;
- ``--log-format json`` writes every record as one JSON object per line (the access line's
  fields as keys), for log shippers.

Logs go to stderr only: an answer's bytes never depend on logging.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Literal

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger
from aiohttp.http_exceptions import HttpProcessingError

LogFormat = Literal["text", "json"]
ACCESS_LOGGER = logging.getLogger("mockserver.access")
CLIENT_GONE_STATUS = 499
"""The status an access line shows for a request whose client left before its answer (nginx's
convention); it is never sent."""
_FIELDS = ("method", "path", "status", "bytes", "duration_ms", "faults", "remote")


class AccessLog(AbstractAccessLogger):
    """One line per request; the fields travel in ``record.access`` for the JSON formatter."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        fields = access_fields(request, response, time)
        line = " ".join(f"{key}={fields[key]}" for key in _FIELDS)
        self.logger.info("%s", line, extra={"access": fields})

    @property
    def enabled(self) -> bool:
        # aiohttp skips timing requests altogether when this is False (the default level).
        return self.logger.isEnabledFor(logging.INFO)


def access_fields(request: web.BaseRequest, response: web.StreamResponse,
                  time: float) -> dict[str, object]:
    """The access line's fields (``faults`` is ``-`` when none applied)."""
    from .http.state import REQUEST_STATE  # the http package imports this module's callers

    state = request.get(REQUEST_STATE) if isinstance(request, web.Request) else None
    names = state.faults.names if state is not None else []
    return {
        "method": request.method,
        "path": request.path,
        "status": response.status,
        "bytes": response.body_length,
        "duration_ms": round(time * 1000.0, 3),
        "faults": ",".join(names) or "-",
        "remote": request.remote or "-",
    }


class ProtocolNoise(logging.Filter):
    """Turns aiohttp's "Error handling request" for a parser rejection into one WARNING line.

    aiohttp logs a malformed request at ERROR with the parser's traceback, although it has
    already answered 400 and nothing in the server failed. Other records pass unchanged.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, HttpProcessingError) and record.levelno >= logging.ERROR:
            record.levelno, record.levelname = logging.WARNING, "WARNING"
            detail = " ".join(str(exc.message).split())[:200]
            record.msg = "rejected a malformed HTTP request from %s: %s"
            remote = record.args[0] if isinstance(record.args, tuple) and record.args else "?"
            record.args = (remote, detail)
            record.exc_info, record.exc_text = None, None
        return True


_NOISE = ProtocolNoise()


def quiet_protocol_noise() -> None:
    """Install :class:`ProtocolNoise` on aiohttp's server logger (idempotent)."""
    server_logger = logging.getLogger("aiohttp.server")
    if _NOISE not in server_logger.filters:
        server_logger.addFilter(_NOISE)


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, message, and the access fields."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": self.formatTime(record), "level": record.levelname, "logger": record.name,
        }
        access = getattr(record, "access", None)
        if isinstance(access, dict):
            entry.update(access)
        else:
            entry["message"] = record.getMessage()
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, separators=(",", ":"), default=str)


def configure_logging(level: str, log_format: LogFormat = "text") -> None:
    """The CLI's logging: stderr, ``level``, text or JSON lines, protocol noise quieted."""
    handler = logging.StreamHandler(sys.stderr)
    if log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    quiet_protocol_noise()
