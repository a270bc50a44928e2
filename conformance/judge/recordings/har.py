"""HAR 1.2 files (a browser's devtools, mitmproxy, Charles, Proxyman), read as a stream.

Spec: HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/): ``log.entries[]``, each with
``request`` (``method``, ``url``, ``headers[{name, value}]``, ``postData.text``) and
``response`` (``status``, ``statusText``, ``httpVersion``, ``headers``, ``content.text``, in
base64 when ``content.encoding`` is ``"base64"``; ``content.size`` is the decoded length).
Entries are read one at a time (:func:`ijson.items`), so a HAR of a day's traffic is never in
memory whole.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator
from typing import IO, Any

import ijson

from .recorded import Headers, Recorded

ENTRIES = "log.entries.item"


def _headers(value: Any) -> Headers:
    if not isinstance(value, list):
        return ()
    return tuple((str(h.get("name", "")), str(h.get("value", ""))) for h in value
                 if isinstance(h, dict) and h.get("name"))


def _base64(text: str) -> bytes | None:
    """A base64 body; Polly.js writes one as a JSON array of base64 pieces (``["H4sI...",
    ...]``), the wire's chunks."""
    pieces: Any = [text]
    if text.lstrip().startswith("["):
        try:
            pieces = json.loads(text)
        except ValueError:
            return None
    if not isinstance(pieces, list) or not all(isinstance(p, str) for p in pieces):
        return None
    try:
        return b"".join(base64.b64decode(piece, validate=False) for piece in pieces)
    except (binascii.Error, ValueError):
        return None


def _text(content: Any) -> tuple[bytes | None, int | None]:
    """The body a HAR ``content`` (or ``postData``) holds, and its size as declared
    (``content.size``, the decoded length: more than the body decodes to means the recorder
    cut it, :func:`.recorded.exchange_of`)."""
    if not isinstance(content, dict) or not isinstance(content.get("text"), str):
        return None, None
    text: str = content["text"]
    if content.get("encoding") == "base64":
        body = _base64(text)
    else:
        body = text.encode("utf-8", "surrogatepass")
    size = content.get("size")
    return body, size if isinstance(size, int) and not isinstance(size, bool) else None


def entry(source: str, index: int, item: Any) -> Recorded | None:
    """One HAR entry; None when it is not shaped like one."""
    if not isinstance(item, dict):
        return None
    request, response = item.get("request"), item.get("response")
    if not isinstance(request, dict) or not isinstance(response, dict):
        return None
    posted, _ = _text(request.get("postData"))
    body, size = _text(response.get("content"))
    status = response.get("status")
    comment = item.get("comment")
    return Recorded(
        source=source, entry=f"log.entries[{index}]", method=str(request.get("method") or "GET"),
        url=str(request.get("url", "")), request_headers=_headers(request.get("headers")),
        request_body=posted or b"",
        status=status if isinstance(status, int) and not isinstance(status, bool) else None,
        headers=_headers(response.get("headers")), body=body,
        reason=str(response.get("statusText") or "") or None,
        http_version=str(response.get("httpVersion") or "") or None,
        comment=comment if isinstance(comment, str) and comment else None, size=size,
    )


def read_har(source: str, stream: IO[bytes]) -> Iterator[Recorded | str]:
    """Every entry of the HAR in ``stream``, in order; a string for an entry that is not one
    (what is wrong with it). A file cut short raises ``ijson.JSONError`` where it ends."""
    for index, item in enumerate(ijson.items(stream, ENTRIES, use_float=True)):
        found = entry(source, index, item)
        yield found if found is not None else (
            f"{source} log.entries[{index}] is not a HAR entry (no request and response)")
