"""How the harness reaches a server: the TLS trust, the client certificate, the proxy.

A CI job reaches a live endpoint through what its network has: a forward proxy, TLS with a
private CA, sometimes mutual TLS. :class:`Network` holds those choices once, resolved from flags
and the environment by :mod:`conformance.target.connection_options`, and turns them into what
each client library takes: aiohttp's ``ssl=`` / ``proxy=`` (:meth:`Network.aiohttp_kwargs`),
requests' ``verify`` / ``cert`` / ``proxies`` (:meth:`Network.requests_kwargs`, for the fuzzer)
and curl's flags (:meth:`Network.curl_args`), so a reproduction goes the way the run went.
Nothing here reads the environment.

The proxy's credentials are secret like API keys: :meth:`Network.redacted` is the copy kept in
recordings, and curl commands name the proxy as ``"$PROXY"``.
"""

from __future__ import annotations

import base64
import functools
import shlex
import ssl
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from .redact import redact_url

PROXY_VARIABLE = "PROXY"
"""The shell variable curl reproductions read the proxy URL from (``--proxy "$PROXY"``)."""


@dataclass(frozen=True)
class Network:
    """The run's connection settings; the default is system trust and a direct connection.

    ``cacert`` replaces the system trust with one bundle (as curl's ``--cacert`` does);
    ``cert`` / ``key`` are the client certificate for mutual TLS (``key`` may be left out when
    ``cert`` holds both); ``insecure`` skips certificate verification (a weakened run, said so
    in every report); ``proxy`` is the forward proxy every request goes through, credentials
    included (``http://user:pass@host:port``), or None for a direct connection.
    """

    cacert: str | None = None
    cert: str | None = None
    key: str | None = None
    insecure: bool = False
    proxy: str | None = field(default=None, repr=False)

    @property
    def weakened(self) -> bool:
        """True when TLS certificates are not verified (``--insecure``)."""
        return self.insecure

    def redacted(self) -> Network:
        """This network with the proxy's password replaced (the copy recordings keep)."""
        return replace(self, proxy=redact_url(self.proxy) if self.proxy else None)

    def ssl_context(self) -> ssl.SSLContext:
        """The TLS client context (built once per settings); ``ssl.SSLError`` / ``OSError``
        when a certificate or key file cannot be loaded."""
        return _context(self.cacert, self.cert, self.key, self.insecure)

    def proxy_parts(self) -> tuple[str | None, dict[str, str]]:
        """The proxy URL without credentials and the ``Proxy-Authorization`` header for them."""
        if not self.proxy:
            return None, {}
        parts = urlsplit(self.proxy)
        if parts.username is None:
            return self.proxy, {}
        host = parts.netloc.rpartition("@")[2]
        bare = urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
        user = unquote(parts.username)
        password = unquote(parts.password or "")
        token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        return bare, {"Proxy-Authorization": f"Basic {token}"}

    def aiohttp_kwargs(self, url: str) -> dict[str, Any]:
        """``session.request`` keyword arguments for ``url``: TLS context and proxy."""
        kwargs: dict[str, Any] = {}
        if urlsplit(url).scheme == "https":
            kwargs["ssl"] = self.ssl_context()
        proxy, headers = self.proxy_parts()
        if proxy is not None:
            kwargs["proxy"] = proxy
            if headers:
                kwargs["proxy_headers"] = headers
        return kwargs

    def requests_kwargs(self) -> dict[str, Any]:
        """``requests`` keyword arguments meaning the same as :meth:`aiohttp_kwargs`.

        requests fills in what is not given from the environment (``HTTPS_PROXY``,
        ``REQUESTS_CA_BUNDLE``) and trusts certifi rather than the system by default, so every
        value is given explicitly: the fuzzer then goes exactly where the probes go. A proxy
        left out is given as None per scheme, which requests reads as "no proxy".
        """
        verify: bool | str
        if self.insecure:
            verify = False
        elif self.cacert:
            verify = self.cacert
        else:
            system = ssl.get_default_verify_paths().cafile
            verify = system if system else True
        kwargs: dict[str, Any] = {"verify": verify}
        if self.cert:
            kwargs["cert"] = (self.cert, self.key) if self.key else self.cert
        proxy = self.proxy or None
        kwargs["proxies"] = {"http": proxy, "https": proxy, "all": proxy}
        return kwargs

    def curl_args(self, *, tls: bool = True) -> list[str]:
        """curl flags reaching the server this way (the proxy as ``"$PROXY"``); without
        ``tls`` (a plain ``http://`` URL, which has no certificate to check) only the proxy."""
        args: list[str] = []
        if self.proxy:
            args += ["--proxy", f'"${PROXY_VARIABLE}"']
        if not tls:
            return args
        if self.insecure:
            args.append("--insecure")
        if self.cacert:
            args += ["--cacert", shlex.quote(self.cacert)]
        if self.cert:
            args += ["--cert", shlex.quote(self.cert)]
        if self.key:
            args += ["--key", shlex.quote(self.key)]
        return args


DIRECT = Network()


@functools.lru_cache(maxsize=16)
def _context(cacert: str | None, cert: str | None, key: str | None,
             insecure: bool) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=cacert)
    if insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if cert:
        context.load_cert_chain(cert, key)
    return context
