"""Keep secrets out of recordings, reports and reproduction commands.

A request header is secret when its name is ``Authorization``, ``Proxy-Authorization`` or
``Cookie``, is in the caller's ``secret_headers`` (case-insensitive), or contains ``key``,
``token`` or ``secret`` (``X-Api-Key``, ``api-key``, ``X-Auth-Token``...). Its value becomes
:data:`REDACTED`. Query parameters with such names are redacted the same way in URLs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "<redacted>"

ALWAYS_SECRET = frozenset({"authorization", "proxy-authorization", "cookie"})
SECRET_WORDS = ("key", "token", "secret")

HeaderItems = Iterable[tuple[str, str]] | Mapping[str, str]


def is_secret_header(name: str, secret_headers: Iterable[str] = ()) -> bool:
    """True when a header (or query parameter) of this name may carry a credential."""
    lowered = name.lower()
    if lowered in ALWAYS_SECRET or lowered in {h.lower() for h in secret_headers}:
        return True
    return any(word in lowered for word in SECRET_WORDS)


def redact_headers(
    headers: HeaderItems, secret_headers: Iterable[str] = ()
) -> tuple[tuple[str, str], ...]:
    """The headers as ``(name, value)`` pairs, order and case kept, secret values replaced."""
    secret = tuple(secret_headers)
    items = headers.items() if isinstance(headers, Mapping) else headers
    return tuple(
        (name, REDACTED if is_secret_header(name, secret) else value) for name, value in items
    )


def redact_url(url: str, secret_params: Iterable[str] = ()) -> str:
    """The URL with secret query values (``?api_key=...``) and any userinfo password redacted."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        netloc = f"{parts.username or ''}:{REDACTED}@{netloc.rpartition('@')[2]}"
    query = parts.query
    if query:
        secret = tuple(secret_params)
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(is_secret_header(name, secret) for name, _ in pairs):
            query = urlencode(
                [(n, REDACTED if is_secret_header(n, secret) else v) for n, v in pairs],
                safe="<>",
            )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
