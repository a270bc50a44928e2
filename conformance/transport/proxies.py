"""The proxy for a URL from ``HTTP_PROXY`` / ``HTTPS_PROXY`` / ``ALL_PROXY`` / ``NO_PROXY``.

The official ``openai`` client honours these through httpx, so a CI job that works with it
must work with the harness: this module follows httpx's reading, rule for rule
(``get_environment_proxies`` and ``URLPattern`` in httpx's ``_utils.py``, after
https://curl.se/libcurl/c/CURLOPT_NOPROXY.html):

- names are case-insensitive, the lower-case spelling wins when both are set, an empty value
  unsets; ``HTTP_PROXY`` in upper case is ignored under CGI (``REQUEST_METHOD`` set), as
  :func:`urllib.request.getproxies_environment` does;
- a proxy without a scheme is ``http://``; ``ALL_PROXY`` serves both schemes;
- ``NO_PROXY`` is comma-separated: ``*`` disables every proxy; an IPv4 / IPv6 address or
  network (``10.0.0.0/8``), ``localhost`` or a ``scheme://host[:port]`` matches exactly;
  ``.example.com`` and ``*.example.com`` match sub-domains only; ``example.com`` matches it
  and its sub-domains; an entry with a port matches that port only;
- the most specific entry wins (a port, then an exact host, then a network, then longer
  hosts, then a scheme over ``all``).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}


def environment_proxies(environ: Mapping[str, str]) -> dict[str, str]:
    """``{scheme: value}`` as :func:`urllib.request.getproxies_environment` reads them."""
    found: dict[str, str] = {}
    cgi = "REQUEST_METHOD" in environ
    for name, value in environ.items():
        lowered = name.lower()
        if value and lowered.endswith("_proxy") and not (cgi and name == "HTTP_PROXY"):
            found[lowered[:-6]] = value
    for name, value in environ.items():
        if name.endswith("_proxy") and name == name.lower():
            if value:
                found[name[:-6]] = value
            else:
                found.pop(name[:-6], None)
    return found


@dataclass(frozen=True)
class _Pattern:
    scheme: str
    host: str
    port: int | None
    network: ipaddress.IPv4Network | ipaddress.IPv6Network | None
    regex: re.Pattern[str] | None

    @property
    def priority(self) -> tuple[int, int, int, int, int]:
        return (0 if self.port is not None else 1,
                1 if self.network is not None else 0 if self.host else 2,
                self.network.num_addresses if self.network is not None else 0,
                -len(self.host) if self.network is None else 0,
                -len(self.scheme))

    def matches(self, scheme: str, host: str, port: int | None) -> bool:
        if self.scheme and self.scheme != scheme:
            return False
        if self.network is not None:
            try:
                if ipaddress.ip_address(host) not in self.network:
                    return False
            except ValueError:
                return False
        elif self.regex is not None and not self.regex.match(host):
            return False
        return self.port is None or self.port == port


def _port(scheme: str, port: int | None) -> int | None:
    return None if port == _DEFAULT_PORTS.get(scheme) else port


def _pattern(text: str) -> _Pattern | None:
    """httpx's URLPattern of ``text`` (``all://*example.com``); None when it cannot parse."""
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return None
    scheme = "" if parts.scheme == "all" else parts.scheme
    host = (parts.hostname or "") if parts.netloc != "*" else ""
    if parts.netloc.startswith("*"):
        host = parts.netloc.split(":")[0] if parts.netloc != "*" else ""
    prefix = parts.path.removeprefix("/")
    network = None
    if prefix:
        try:
            network = ipaddress.ip_network(f"{host}/{prefix}", strict=False)
        except ValueError:
            return None
    regex = None
    if network is None and host:
        if host.startswith("*."):
            regex = re.compile(rf"^.+\.{re.escape(host[2:])}$")
        elif host.startswith("*"):
            regex = re.compile(rf"^(.+\.)?{re.escape(host[1:])}$")
        else:
            regex = re.compile(rf"^{re.escape(host)}$")
    return _Pattern(scheme, host, _port(scheme or "all", port), network, regex)


def _is_ip(text: str, version: int) -> bool:
    try:
        return ipaddress.ip_address(text.split("/")[0]).version == version
    except ValueError:
        return False


def _no_proxy_key(entry: str) -> str | None:
    if "://" in entry:
        return entry
    if _is_ip(entry, 4):
        return f"all://{entry}"
    if _is_ip(entry, 6):
        address, slash, subnet = entry.partition("/")
        return f"all://[{address}]/{subnet}" if slash else f"all://[{entry}]"
    if entry.lower() == "localhost" or entry.startswith("["):
        return f"all://{entry}"
    if entry.startswith("*.") and "/" not in entry:
        return f"all://{entry}"
    if entry.startswith("."):
        return f"all://*{entry}"
    if "/" not in entry:
        return f"all://*{entry}"
    return None


def proxy_mounts(environ: Mapping[str, str]) -> list[tuple[_Pattern, str | None]]:
    """The environment's proxy table, most specific first, as httpx builds it."""
    found = environment_proxies(environ)
    mounts: dict[str, str | None] = {}
    for scheme in ("http", "https", "all"):
        if found.get(scheme):
            value = found[scheme]
            mounts[f"{scheme}://"] = value if "://" in value else f"http://{value}"
    for entry in (part.strip() for part in found.get("no", "").split(",")):
        if entry == "*":
            return []
        key = _no_proxy_key(entry) if entry else None
        if key is not None:
            mounts[key] = None
    table = [(pattern, proxy) for key, proxy in mounts.items()
             if (pattern := _pattern(key)) is not None]
    return sorted(table, key=lambda item: item[0].priority)


def proxy_for(url: str, environ: Mapping[str, str]) -> str | None:
    """The proxy the environment gives ``url`` (credentials included), or None: direct."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    try:
        port = _port(scheme, parts.port)
    except ValueError:
        port = None
    for pattern, proxy in proxy_mounts(environ):
        if pattern.matches(scheme, host, port):
            return proxy
    return None
