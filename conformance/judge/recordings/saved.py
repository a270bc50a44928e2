"""The harness's own JSON reports (``conformance run --json``, ``conformance fuzz --json``).

Their shape is ``conformance/reporting/report.schema.json``: ``exchanges`` maps a label
(``greedy/s``, ``fuzz/3: POST /completions, ...``) to the request and the response as received,
the body as text (``body``) or base64 (``body_base64``); a body longer than the report keeps is
cut (``body_cut``), and such an exchange cannot be judged. A fuzz report keeps only the start
of each finding's answer, so most of its exchanges are cut. Exchanges are read one at a time.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator
from typing import IO, Any

import ijson

from conformance.transport import Termination

from .recorded import Headers, Recorded


def _headers(value: Any) -> Headers:
    if not isinstance(value, list):
        return ()
    return tuple((str(pair[0]), str(pair[1])) for pair in value
                 if isinstance(pair, list) and len(pair) == 2)


def _body(holder: dict[str, Any]) -> bytes | None:
    if isinstance(holder.get("body"), str):
        return str(holder["body"]).encode("utf-8", "surrogatepass")
    if isinstance(holder.get("body_base64"), str):
        try:
            return base64.b64decode(holder["body_base64"])
        except (binascii.Error, ValueError):
            return None
    return None


def _cut(item: dict[str, Any]) -> str | None:
    cut = item.get("body_cut")
    if isinstance(cut, dict) or item.get("body_truncated"):
        why = cut.get("why") if isinstance(cut, dict) else None
        return f"the report holds only part of the body ({why or 'body_truncated'})"
    return None


def _termination(value: Any) -> Termination:
    try:
        return Termination(value)
    except ValueError:
        return Termination.EOF


def exchange(source: str, label: str, item: Any) -> Recorded | str:
    """One report exchange, or what is wrong with it."""
    where = f"exchanges[{json.dumps(label, ensure_ascii=False)}]"
    request = item.get("request") if isinstance(item, dict) else None
    if not isinstance(request, dict):
        return f"{source} {where} is not a report exchange (no request)"
    status = item.get("status")
    return Recorded(
        source=source, entry=where, method=str(request.get("method") or "GET"),
        url=str(request.get("url") or ""), request_headers=_headers(request.get("headers")),
        request_body=_body(request) or b"",
        status=status if isinstance(status, int) and not isinstance(status, bool) else None,
        headers=_headers(item.get("headers")), body=_body(item),
        reason=item.get("reason") if isinstance(item.get("reason"), str) else None,
        http_version=item.get("http_version") if isinstance(item.get("http_version"), str)
        else None,
        cut=_cut(item), termination=_termination(item.get("termination")),
        error=item.get("error") if isinstance(item.get("error"), str) else None,
    )


def read_report(source: str, stream: IO[bytes]) -> Iterator[Recorded | str]:
    """Every exchange of the report in ``stream``, in the report's order."""
    for label, item in ijson.kvitems(stream, "exchanges", use_float=True):
        yield exchange(source, str(label), item)
