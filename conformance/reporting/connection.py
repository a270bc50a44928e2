"""How the run reached the server, as every report states it: the proxy, the TLS trust, and
whether verification was off (``--insecure``, a weakened run).

It is read from the recorded exchanges (each request keeps the redacted
:class:`~conformance.transport.Network` it went out with), so a report says what was done on
the wire, not what was asked for.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from conformance.model import RunResult
from conformance.transport import Network
from spec import JSON

WEAKENED = ("WEAKENED RUN: TLS certificates were not verified (--insecure); the verdicts say "
            "nothing about the server's certificate")


def run_network(result: RunResult) -> Network | None:
    """The network of the run's requests (all share the run's settings); None: direct, with
    the default trust."""
    for exchange in result.exchanges.values():
        if exchange.request.network is not None:
            return exchange.request.network
    return None


def connection_lines(result: RunResult) -> list[str]:
    """The report's lines about the connection (none for a plain direct run): the CA bundle
    and client certificate only for an ``https://`` target, where they were used."""
    https = urlsplit(result.target.base_url).scheme == "https"
    return network_lines(run_network(result), https=https)


def connection_json(result: RunResult) -> dict[str, JSON]:
    """The JSON report's ``connection``: proxy (redacted), CA bundle, client certificate,
    ``insecure`` and ``weakened``."""
    return network_json(run_network(result))


def network_lines(network: Network | None, *, https: bool = True) -> list[str]:
    """Lines saying how requests went out ``network`` (none for a plain direct run); shared
    by the run's and the fuzzer's reports. Without ``https`` the TLS files go unsaid: a CA
    bundle from ``$SSL_CERT_FILE`` is not news about a plain HTTP run."""
    if network is None:
        return []
    lines = []
    if network.proxy:
        lines.append(f"through the proxy {network.proxy}")
    if network.cacert and https:
        lines.append(f"trusting the CA bundle {network.cacert}")
    if network.cert and https:
        lines.append(f"with the client certificate {network.cert}")
    if network.weakened:
        lines.append(WEAKENED)
    return lines


def network_json(network: Network | None) -> dict[str, JSON]:
    """``connection`` of a JSON report: proxy (redacted), CA bundle, client certificate,
    ``insecure`` and ``weakened``."""
    network = (network or Network()).redacted()
    return {
        "proxy": network.proxy,
        "cacert": network.cacert,
        "cert": network.cert,
        "insecure": network.insecure,
        "weakened": network.weakened,
    }
