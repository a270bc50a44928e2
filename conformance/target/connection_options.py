"""How the target is reached: TLS trust, a client certificate and a proxy, from the flags, else
the environment, as the ``openai`` client would read them.

Every file is loaded here, so a wrong one is a usage error naming its flag (or its environment
variable) before anything is sent. What the flags and the environment give becomes a
:class:`~conformance.transport.Network`, which the transport turns into what each client takes.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Mapping
from urllib.parse import urlsplit

from conformance.errors import UsageError
from conformance.target.options import TargetOptions
from conformance.transport import Network, proxy_for

CA_BUNDLE_VARIABLES = ("REQUESTS_CA_BUNDLE", "SSL_CERT_FILE")
"""Where the ecosystem looks for a CA bundle when none is given: requests reads the first,
OpenSSL (Python's ``ssl``, httpx with ``trust_env``) the second."""


def _readable(flag: str, path: str) -> str:
    if not os.path.isfile(path):
        raise UsageError(f"{flag} {path!r}: no such file")
    return path


def pick_network(
    options: TargetOptions, environ: Mapping[str, str], *, embedded: bool,
) -> Network:
    """The TLS trust, client certificate and proxy of a run, from flags, else the environment.

    The CA bundle is ``--cacert``, else ``$REQUESTS_CA_BUNDLE``, else ``$SSL_CERT_FILE``, else
    the system trust. The proxy is ``--proxy``, else what ``HTTPS_PROXY`` / ``HTTP_PROXY`` /
    ``ALL_PROXY`` / ``NO_PROXY`` give the base URL, read as the ``openai`` client (httpx) reads
    them (:func:`conformance.transport.proxy_for`). The embedded mock is a child on loopback:
    the environment's proxy and CA bundle are not for it (flags still are)."""
    cacert = options.cacert and _readable(options.flag("cacert"), options.cacert)
    if not cacert and not embedded:
        for name in CA_BUNDLE_VARIABLES:
            if environ.get(name):
                cacert = _readable(f"${name}", environ[name])
                break
    if options.key and not options.cert:
        raise UsageError(f"{options.flag('key')} needs {options.flag('cert')}")
    cert = options.cert and _readable(options.flag("cert"), options.cert)
    key = options.key and _readable(options.flag("key"), options.key)
    proxy = options.proxy
    if proxy is None and not embedded and options.base_url:
        proxy = proxy_for(options.base_url, environ)
    if proxy is not None and urlsplit(proxy).scheme not in ("http", "https"):
        raise UsageError(f"the proxy must be an http:// or https:// URL, got scheme "
                         f"{urlsplit(proxy).scheme!r}")
    network = Network(cacert=cacert or None, cert=cert or None, key=key or None,
                      insecure=bool(options.insecure), proxy=proxy or None)
    try:
        network.ssl_context()
    except (ssl.SSLError, OSError) as exc:
        names = "/".join(options.flag(n) for n in ("cacert", "cert", "key")
                         if getattr(options, n))
        raise UsageError(f"cannot load the TLS files of {names or 'the CA bundle'}: "
                         f"{exc}") from None
    return network
