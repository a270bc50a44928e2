"""Reading a recording: the exchanges of a ``conformance run --json`` report.

The report format is documented in ``conformance/reporting/json_report.py``; this module reads
it without importing the harness (the mock and the harness only share the wire and the file).
Each exchange becomes a :class:`RecordedExchange`: the request as it was matched on, and the
response exactly as it arrived (status, reason, headers, raw body bytes, when each piece came).
Anything the file gets wrong is a :class:`RecordingError` naming the exchange and the field.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

HANGING_TERMINATIONS = frozenset({"total-time-limit", "idle-timeout"})
"""The harness gave up waiting: the server had stopped sending (a replay stops sending too)."""
BROKEN_TERMINATIONS = frozenset({"connection-error", "connect-error"})
"""The connection failed: a replay breaks it at the same point."""


class RecordingError(ValueError):
    """The file is not a recording this mock can replay."""


@dataclass(frozen=True)
class RecordedExchange:
    """One exchange of a recording; times are seconds since the request started."""

    label: str
    method: str
    target: str
    """The request's path and query, as matched (``/v1/completions``)."""
    content_type: str | None
    body: bytes
    status: int | None
    reason: str | None
    headers: tuple[tuple[str, str], ...]
    response_body: bytes
    chunks: tuple[tuple[int, float], ...]
    headers_at: float
    ended_at: float
    termination: str
    started_wall: float
    cut: str | None = None
    """Why the recorded body is not whole (the report kept its head and tail, or the harness
    stopped keeping it), None when it is: a cut exchange cannot be served back as it was."""

    @property
    def hangs(self) -> bool:
        """True when the recorded server stopped sending and never ended the response."""
        return self.termination in HANGING_TERMINATIONS

    @property
    def breaks(self) -> bool:
        """True when the recorded connection failed (reset, cut short, never answered)."""
        return self.termination in BROKEN_TERMINATIONS

    def pieces(self) -> list[tuple[bytes, float]]:
        """The response body in the pieces it arrived in, with their arrival times.

        A recording made before chunk times were kept has none: the body is one piece at the
        time the headers came."""
        body, out, offset = self.response_body, [], 0
        for size, at in self.chunks:
            if offset >= len(body):
                break
            out.append((body[offset : offset + size], at))
            offset += size
        if offset < len(body):
            out.append((body[offset:], self.chunks[-1][1] if self.chunks else self.headers_at))
        return out


def load_recording(path: str | Path) -> list[RecordedExchange]:
    """Every exchange of the report at ``path``, oldest request first."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise RecordingError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise RecordingError(f"{path} is not JSON: {exc}") from None
    return parse_recording(document, source=str(path))


def parse_recording(document: Any, *, source: str = "the recording") -> list[RecordedExchange]:
    """The exchanges of a parsed report (``{"exchanges": {"probe/key": {...}}}``)."""
    exchanges = document.get("exchanges") if isinstance(document, dict) else None
    if not isinstance(exchanges, dict):
        raise RecordingError(
            f"{source} has no \"exchanges\" object: pass a report written by "
            "`conformance run --json FILE`"
        )
    recorded = [_exchange(label, item, source) for label, item in exchanges.items()]
    if not recorded:
        raise RecordingError(f"{source} records no exchange")
    recorded.sort(key=lambda e: e.started_wall)
    return recorded


def _exchange(label: str, item: Any, source: str) -> RecordedExchange:
    where = f"{source}: exchange {label!r}"
    if not isinstance(item, dict):
        raise RecordingError(f"{where} is not an object")
    request = _field(item, "request", dict, where)
    url = _field(request, "url", str, where + " request")
    parts = urlsplit(url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    headers = _headers(item.get("headers", []), where)
    request_headers = _headers(request.get("headers", []), where + " request")
    timings: dict[str, Any] = item["timings"] if isinstance(item.get("timings"), dict) else {}
    status = item.get("status")
    if status is not None and (not isinstance(status, int) or not 100 <= status <= 999):
        raise RecordingError(f"{where}: status {status!r} is not an HTTP status")
    return RecordedExchange(
        label=label,
        method=_field(request, "method", str, where + " request").upper(),
        target=target,
        content_type=media_type(_header(request_headers, "Content-Type")),
        body=_body(request, where + " request"),
        status=status,
        reason=item.get("reason") if isinstance(item.get("reason"), str) else None,
        headers=headers,
        response_body=_body(item, where),
        chunks=_chunks(item.get("chunks", []), where),
        headers_at=_seconds(timings.get("headers_at")),
        ended_at=_seconds(timings.get("ended_at")),
        termination=str(item.get("termination", "eof")),
        started_wall=_seconds(timings.get("started_wall")),
        cut=_cut(item),
    )


def _cut(item: Mapping[str, Any]) -> str | None:
    """Why an exchange's body is not whole in the report, or None."""
    cut = item.get("body_cut")
    if isinstance(cut, dict):
        return (f"{cut.get('why', 'the body was cut')}: {cut.get('omitted_bytes', '?')} of "
                f"{item.get('bytes_received', '?')} bytes are not in the report")
    if item.get("body_truncated") is True:
        return (f"the harness kept only the start of the body: "
                f"{item.get('bytes_received', '?')} bytes arrived")
    return None


def media_type(value: str | None) -> str | None:
    """``application/json`` from ``application/json; charset=utf-8``; None stays None."""
    return value.split(";", 1)[0].strip().lower() if value is not None else None


def _field(item: Mapping[str, Any], name: str, kind: type, where: str) -> Any:
    value = item.get(name)
    if not isinstance(value, kind):
        raise RecordingError(f"{where} has no {kind.__name__} {name!r}")
    return value


def _headers(value: Any, where: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, list) or not all(
        isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)
        for pair in value
    ):
        raise RecordingError(f"{where}: headers must be a list of [name, value] pairs")
    return tuple((name, content) for name, content in value)


def _header(headers: tuple[tuple[str, str], ...], name: str) -> str | None:
    lowered = name.lower()
    return next((value for key, value in headers if key.lower() == lowered), None)


def _body(item: Mapping[str, Any], where: str) -> bytes:
    if isinstance(item.get("body_base64"), str):
        try:
            return base64.b64decode(item["body_base64"], validate=True)
        except (binascii.Error, ValueError):
            raise RecordingError(f"{where}: body_base64 is not base64") from None
    if isinstance(item.get("body"), str):
        return str(item["body"]).encode("utf-8", "surrogateescape")
    if isinstance(item.get("sse_lines"), list):  # a report written before bodies were kept
        return "".join(f"{line}\n" for line in item["sse_lines"]).encode()
    return b""


def _chunks(value: Any, where: str) -> tuple[tuple[int, float], ...]:
    if not isinstance(value, list):
        raise RecordingError(f"{where}: chunks must be a list of [bytes, seconds]")
    out = []
    for pair in value:
        if (
            not isinstance(pair, list) or len(pair) != 2
            or not isinstance(pair[0], int) or not isinstance(pair[1], (int, float))
        ):
            raise RecordingError(f"{where}: chunks must be a list of [bytes, seconds]")
        out.append((pair[0], float(pair[1])))
    return tuple(out)


def _seconds(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) else 0.0
