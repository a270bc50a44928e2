"""The proxy variables read as httpx (the ``openai`` client's HTTP library) reads them: httpx's
own table is the oracle, over URLs and environments chosen to hit each rule; and the network
settings turn into the same meaning for aiohttp, requests and curl."""

from __future__ import annotations

import os

import pytest

from conformance.transport import Network, proxy_for
from conformance.transport.proxies import environment_proxies

httpx = pytest.importorskip("httpx2")
from httpx2._utils import URLPattern, get_environment_proxies  # noqa: E402

P = "http://proxy.test:3128"
ENVIRONMENTS = [
    {},
    {"HTTP_PROXY": P},
    {"HTTPS_PROXY": "proxy.test:8080"},
    {"ALL_PROXY": P, "NO_PROXY": "internal.test"},
    {"HTTP_PROXY": P, "HTTPS_PROXY": P, "NO_PROXY": ".example.com,10.0.0.0/8,::1"},
    {"HTTPS_PROXY": P, "NO_PROXY": "*.example.com, localhost ,127.0.0.1:8443"},
    {"HTTPS_PROXY": P, "no_proxy": "example.com", "NO_PROXY": "other.test"},
    {"HTTPS_PROXY": P, "https_proxy": "http://lower.test:1"},
    {"HTTPS_PROXY": P, "https_proxy": ""},
    {"HTTP_PROXY": P, "NO_PROXY": "*"},
    {"HTTPS_PROXY": P, "NO_PROXY": "https://api.example.com"},
]
URLS = [
    "http://example.com/v1", "https://example.com/v1", "https://api.example.com/v1",
    "https://notexample.com/v1", "http://10.1.2.3:8000/v1", "http://[::1]:8000/v1",
    "https://localhost:8443/v1", "https://127.0.0.1:8443/v1", "https://127.0.0.1:9000/v1",
    "https://internal.test/v1", "https://a.internal.test/v1", "https://other.test/v1",
]


def httpx_proxy(url: str, environ: dict[str, str], monkeypatch: pytest.MonkeyPatch
                ) -> str | None:
    for name in list(os.environ):
        if name.lower().endswith("_proxy"):
            monkeypatch.delenv(name)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    mounts = sorted((URLPattern(key), value) for key, value in get_environment_proxies().items())
    target = httpx.URL(url)
    return next((value for pattern, value in mounts if pattern.matches(target)), None)


@pytest.mark.parametrize("environ", ENVIRONMENTS)
def test_the_proxy_for_a_url_is_httpx_s(environ: dict[str, str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    for url in URLS:
        assert proxy_for(url, environ) == httpx_proxy(url, environ, monkeypatch), url


def test_upper_case_http_proxy_is_ignored_under_cgi() -> None:
    assert environment_proxies({"HTTP_PROXY": P, "REQUEST_METHOD": "GET"}) == {}
    assert environment_proxies({"http_proxy": P, "REQUEST_METHOD": "GET"}) == {"http": P}


def test_the_network_means_the_same_to_every_client() -> None:
    network = Network(cacert="/ca.pem", cert="/c.pem", key="/c.key",
                      proxy="http://ci:pw@proxy.test:3128")
    assert network.redacted().proxy == "http://ci:<redacted>@proxy.test:3128"
    assert "pw" not in repr(network)
    bare, headers = network.proxy_parts()
    assert bare == "http://proxy.test:3128"
    assert headers == {"Proxy-Authorization": "Basic Y2k6cHc="}
    assert network.requests_kwargs() == {
        "verify": "/ca.pem", "cert": ("/c.pem", "/c.key"),
        "proxies": {"http": network.proxy, "https": network.proxy, "all": network.proxy}}
    assert network.curl_args() == ["--proxy", '"$PROXY"', "--cacert", "/ca.pem",
                                   "--cert", "/c.pem", "--key", "/c.key"]
    direct = Network(insecure=True).requests_kwargs()
    assert direct["verify"] is False
    assert direct["proxies"] == {"http": None, "https": None, "all": None}
