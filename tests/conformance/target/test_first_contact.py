"""First contact (issue 31): a wrong key, URL or rate limit gets one clear line, never a verdict.

Every case runs as a user would run it, ``conformance run`` against a real server on loopback:
the mock (plain, over TLS, with mutual TLS), a port nothing listens on, one that accepts and
never answers, proxies, and small scripted servers that refuse everything. Each case is one
line on stderr with exit status 2 (the README's table); a line's variable part (OpenSSL's words)
is ``…`` in the table.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from first_contact_support import (
    KEY_ERROR,
    RATE_ERROR,
    Refuse,
    catalog,
    cli,
    closing_server,
    free_port,
    gatekeeper,
    one_line,
    refusing,
    silent_server,
)
from network_support import LoopbackProxy, TLSKit, loopback_proxy

from conformance.model import Verdict
from conformance.model.coverage import dangling_pointers
from conformance.rules import CATALOG
from conformance.target.embedded import EmbeddedMock

# -- one table of connection and URL mistakes ---------------------------------------------


@dataclass
class Targets:
    """Everything the table's cases aim at, started once for the module."""

    mock: EmbeddedMock
    https: EmbeddedMock
    mtls: EmbeddedMock
    kit: TLSKit
    silent: int
    closing: int
    proxy: LoopbackProxy
    guarded_proxy: LoopbackProxy

    @property
    def http_url(self) -> str:
        return self.mock.openai_url

    @property
    def http_root(self) -> str:
        return self.http_url.rsplit("/v1", 1)[0]

    @property
    def http_where(self) -> str:
        return self.http_root.split("://", 1)[1]

    @property
    def https_url(self) -> str:
        return self.https.openai_url

    @property
    def https_where(self) -> str:
        return self.https_url.split("://", 1)[1].split("/", 1)[0]


@pytest.fixture(scope="module")
def targets(mock: EmbeddedMock, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Targets]:
    kit = TLSKit.make(tmp_path_factory.mktemp("tls"))
    with (kit.mock() as https, kit.mock("--tls-client-ca", kit.ca) as mtls,
          silent_server() as silent, closing_server() as closing, loopback_proxy() as proxy,
          loopback_proxy(credentials=("ci", "secret")) as guarded):
        yield Targets(mock, https, mtls, kit, silent, closing, proxy, guarded)


Case = Callable[[Targets], tuple[tuple[str, ...], str]]


def _refused(t: Targets) -> tuple[tuple[str, ...], str]:
    port = free_port()
    return (("--base-url", f"http://127.0.0.1:{port}/v1"),
            f"cannot connect to 127.0.0.1:{port}: connection refused, nothing listens there: "
            "start the server, or check --base-url")


def _proxy_unreachable(t: Targets) -> tuple[tuple[str, ...], str]:
    proxy = f"http://127.0.0.1:{free_port()}"
    return (("--base-url", t.http_url, "--proxy", proxy),
            f"cannot connect to the proxy {proxy} (…): check --proxy (or HTTPS_PROXY / "
            "HTTP_PROXY, NO_PROXY)")


CASES: dict[str, Case] = {
    "refused": _refused,
    "dns": lambda t: (
        ("--base-url", "http://no-such-host.invalid/v1"),
        "cannot connect to no-such-host.invalid: the host name does not resolve (DNS): check "
        "--base-url"),
    "connect-timeout-no-answer": lambda t: (
        ("--base-url", f"http://127.0.0.1:{t.silent}/v1", "--timeout", "1"),
        f"127.0.0.1:{t.silent} accepted the connection but sent no answer to GET "
        f"http://127.0.0.1:{t.silent}/v1/models within 1 s: raise --timeout if the server is "
        "slow"),
    "closed-unanswered": lambda t: (
        ("--base-url", f"http://127.0.0.1:{t.closing}/v1"),
        f"127.0.0.1:{t.closing} closed the connection without answering GET "
        f"http://127.0.0.1:{t.closing}/v1/models: if it serves HTTPS, use https://, as in "
        f"--base-url https://127.0.0.1:{t.closing}/v1"),
    "https-url-on-plain-http": lambda t: (
        ("--base-url", "https://" + t.http_url.split("://", 1)[1]),
        f"{t.http_where} speaks plain HTTP, not TLS: use http://, as in --base-url "
        f"{t.http_url}"),
    "untrusted-certificate": lambda t: (
        ("--base-url", t.https_url),
        f"cannot verify the TLS certificate of {t.https_url}/models (certificate verify "
        "failed: …): pass --cacert FILE with the CA that signed it (or --insecure to skip "
        "verification)"),
    "client-certificate-asked": lambda t: (
        ("--base-url", t.mtls.openai_url, "--cacert", t.kit.ca),
        f"the TLS connection to {t.mtls.openai_url}/models failed (…): if the server asks for "
        "a client certificate, pass --cert FILE --key FILE"),
    "proxy-asks-for-credentials": lambda t: (
        ("--base-url", t.https_url, "--cacert", t.kit.ca, "--proxy", t.guarded_proxy.url),
        f"the proxy {t.guarded_proxy.url} did not let the request through (…407…): check "
        "--proxy (or HTTPS_PROXY / HTTP_PROXY, NO_PROXY), with credentials as "
        "http://USER:PASS@HOST:PORT if it asks for them"),
    "proxy-unreachable": _proxy_unreachable,
    "base-url-without-v1": lambda t: (
        ("--base-url", t.http_root),
        f"GET {t.http_root}/models answered 404, but {t.http_url}/models answers HTTP 200: did "
        f"you mean --base-url {t.http_url}?"),
    "base-url-of-the-operation": lambda t: (
        ("--base-url", t.http_url + "/completions"),
        "--base-url ends in /completions, an operation: give the API root as an OpenAI client "
        f"takes it: --base-url {t.http_url}"),
    "not-a-url": lambda t: (
        ("--base-url", "notaurl"),
        "--base-url 'notaurl' is not a URL: give the scheme and host, as in --base-url "
        "http://127.0.0.1:8000/v1"),
    "no-scheme": lambda t: (
        ("--base-url", t.http_url.split("://", 1)[1]),
        f"--base-url '{t.http_url.split('://', 1)[1]}' has no scheme: did you mean --base-url "
        f"{t.http_url}?"),
    "not-http": lambda t: (
        ("--base-url", "ftp://example.com/v1"),
        "--base-url 'ftp://example.com/v1': the scheme must be http:// or https://, not ftp://"),
    "no-host": lambda t: (
        ("--base-url", "http:///v1"),
        "--base-url 'http:///v1' has no host: as in --base-url http://127.0.0.1:8000/v1"),
}


@pytest.mark.parametrize("case", CASES)
def test_a_connection_or_url_mistake_is_one_line_naming_cause_and_fix(
    targets: Targets, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "SSL_CERT_FILE",
                 "REQUESTS_CA_BUNDLE"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    argv, expected = CASES[case](targets)
    one_line(argv, expected)


# -- whole runs against servers that refuse ------------------------------------------------


def test_a_server_that_answers_401_to_everything_is_one_line_not_a_verdict() -> None:
    with refusing(401, KEY_ERROR) as url:
        for argv, what in (((), "asks for an API key"),
                           (("--api-key", "sk-wrong"), "refused the API key"),
                           (("--api-key", "sk-wrong", "--model", "reference-ngram"),
                            "refused the API key")):
            one_line(("--base-url", url, *argv),
                     f'the server {what} (HTTP 401 to GET {url}/models: "Incorrect API key '
                     'provided"): pass --api-key or set CONFORMANCE_API_KEY')


def test_a_server_that_answers_429_to_everything_is_one_line_not_a_verdict() -> None:
    with refusing(429, RATE_ERROR, {"Retry-After": "0"}) as url:
        one_line(("--base-url", url, "--model", "reference-ngram"),
                 f"the server rate-limits this client (429) after 3 retries of the first "
                 f"request, GET {url}/models: wait and run again, or raise --retries")


def test_a_server_that_closes_every_connection_is_one_line_not_a_verdict() -> None:
    with closing_server() as port:
        url = f"http://127.0.0.1:{port}/v1"
        one_line(("--base-url", url, "--model", "reference-ngram"),
                 f"127.0.0.1:{port} closed the connection without answering GET {url}/models: "
                 f"if it serves HTTPS, use https://, as in --base-url https://127.0.0.1:{port}"
                 "/v1")


def completions_only(status: int, body: object) -> Refuse:
    """Refuse every completion request; the model listing passes (first contact succeeds)."""
    return lambda path, _: (status, body) if path.endswith("/completions") else None


UPSTREAM_DOWN = {"error": {"message": "upstream connect error or disconnect/reset before "
                           "headers", "type": "server_error", "param": None, "code": None}}
"""What a gateway whose upstream is down answers every completion request (Envoy's words)."""
PORTKEY_UPSTREAM_DOWN = {"html-message": "TypeError: fetch failed: connect ECONNREFUSED "
                                         "127.0.0.1:8000"}
"""The Portkey gateway's answer then: JSON, but neither the envelope nor a 502 / 503."""
INVALID_INPUT_RULES = frozenset(
    rule.id for rule in CATALOG if set(rule.probes) == {"invalid"}) - {"ERRORS-006"}
ALSO_JUDGED = {"500": INVALID_INPUT_RULES | {"ERRORS-011"},
               "500-portkey": INVALID_INPUT_RULES | {"ERRORS-011"}}
"""Rules besides ERRORS-008 that judge what a refusal saw: a gateway answers the invalid
requests 500 too, which the rules of invalid input judge (ERRORS-002: "not a server error"; the
envelope's shape), and ERRORS-011 judges the shape of every 5xx (here the envelope: it passes).
ERRORS-006 is not among them: it SKIPs, its health check failing with the rest."""

REFUSED_COMPLETIONS = {
    "401": (completions_only(401, KEY_ERROR),
            'the server refused the API key (HTTP 401 to POST {url}/completions: "Incorrect API '
            'key provided"): pass --api-key or set CONFORMANCE_API_KEY'),
    "404": (completions_only(404, {"error": {"message": "no such model", "type": "x"}}),
            'every completion request was answered 404 (POST {url}/completions: "no such '
            'model"): check --model (GET {url}/models lists the models) and --base-url'),
    "429": (completions_only(429, RATE_ERROR),
            "the server rate-limited … of … completion requests (429 after 3 retries each), too "
            "many to judge the rest: lower --concurrency (now 4) or raise --retries"),
    "500": (completions_only(500, UPSTREAM_DOWN),
            'no completion request got a 2xx: all … were answered HTTP 500 (POST {url}/'
            'completions: "upstream connect error or disconnect/reset before headers"): the '
            "server fails them; look at its logs (behind a gateway: is its upstream up?)"),
    "500-portkey": (completions_only(500, PORTKEY_UPSTREAM_DOWN),
                    'no completion request got a 2xx: all … were answered HTTP 500 (POST {url}/'
                    'completions: "{"html-message": "TypeError: fetch failed: connect '
                    'ECONNREFUSED…"): the server fails them; look at its logs (behind a gateway: '
                    "is its upstream up?)"),
    "closed": (completions_only(0, None),
               "127.0.0.1:… closed the connection without answering POST {url}/completions, "
               "on a fresh connection too: the server broke before answering; look at its "
               "logs"),
}


@pytest.mark.parametrize("refusal", REFUSED_COMPLETIONS)
def test_a_run_whose_completions_are_all_refused_passes_nothing_and_is_one_line(
    mock: EmbeddedMock, refusal: str
) -> None:
    """First contact passes (the listing answers); the whole catalog runs and is refused. The
    run is one line, exit 2; and no rule of the catalog PASSed on what it saw."""
    refuse, expected = REFUSED_COMPLETIONS[refusal]
    with gatekeeper(mock, refuse) as (url, _):
        one_line(("--base-url", url, "--api-key", "sk-any"), expected.replace("{url}", url))
        result = catalog(url)
    passed = sorted(r.rule.id for r in result.results if r.verdict is Verdict.PASS)
    also = ALSO_JUDGED.get(refusal, frozenset())
    # the listing answered
    assert all(rule.startswith("MODELS-") or rule in also for rule in passed), passed
    judged = {r.rule.id: (r.verdict.value, r.message[:120]) for r in result.results
              if r.verdict not in (Verdict.SKIP, Verdict.PASS)}
    # the rule that judges refused valid requests (ERRORS-006 too: the health check after the
    # invalid requests is not blamed on them when nothing else was answered either)
    assert set(judged) <= {"ERRORS-008", *also}, judged
    if refusal == "500-portkey":  # the page is judged for what it is, behind the one line
        assert judged["ERRORS-011"][0] == "NON_STRICT", judged
    if refusal.startswith("500"):  # each SKIP names ERRORS-008, which failed
        assert dangling_pointers(result.results) == {}, "SKIPs pointing at no failure"
        health = next(r for r in result.results if r.rule.id == "ERRORS-006")
        assert health.verdict is Verdict.SKIP and health.message.startswith(
            "no other valid request of the run got 2xx either"), health.message


def test_a_run_whose_completions_are_all_unavailable_is_one_line_not_a_pass(
    mock: EmbeddedMock,
) -> None:
    """503 with ``Retry-After: 3600`` to every completion request (the retries wait at most
    --timeout): the run was "PASSED" with every rule SKIPped "refused, not judged"; it is one
    line and exit 2, since nothing was answered."""
    unavailable = {"error": {"message": "Service temporarily unavailable", "type": "x"}}
    with gatekeeper(mock, completions_only(503, unavailable), retry_after="3600") as (url, _):
        one_line(("--base-url", url, "--timeout", "1", "--retries", "1", "--concurrency", "16"),
                 f"no completion request got a 2xx: all … were answered HTTP 503 after 1 retry "
                 f'each (POST {url}/completions: "Service temporarily unavailable"): wait and '
                 "run again, or raise --retries")



def a_third(path: str, body: bytes) -> tuple[int, object] | None:
    """429 for about a third of the completion requests, always the same ones (by body), so
    the retries meet it again."""
    if not path.endswith("/completions") or hashlib.sha256(body).digest()[0] % 3:
        return None
    return 429, RATE_ERROR


def test_a_partial_rate_limit_skips_the_rules_it_blocked_and_fails_none(
    mock: EmbeddedMock, tmp_path: Path
) -> None:
    """A 429 that outlasts the retries is never a FAIL of a content rule (ECHO-004, ERRORS-001
    and PARAMS-001 failed "Expected 200, Actual 429" before): the rules it blocked SKIP, saying
    what to do, and the summary counts the refused requests."""
    report = tmp_path / "r.json"
    with gatekeeper(mock, a_third) as (url, gate):
        status, out, err = cli("run", "--base-url", url, "-q", "--json", str(report))
    assert status == 0, err
    assert gate.refused > 0
    data = json.loads(report.read_text())
    verdicts = {item["rule"]: item for item in data["results"]}
    assert {item["verdict"] for item in verdicts.values()} <= {"PASS", "SKIP"}
    skipped = [item for item in verdicts.values() if item["verdict"] == "SKIP"
               and not item["message"].startswith("feature not claimed")]  # EXT-001 (vLLM's)
    assert skipped
    for item in skipped:
        assert "rate limited (429) after 3 retries" in item["message"], item
        assert item["message"].endswith("lower --concurrency or raise --retries")
    refused = data["stats"]["refused"]["rate-limited"]["count"]
    completions = data["stats"]["completions"]
    assert 0 < refused < completions / 2
    assert (f"refused, not judged: {refused} of {completions} completion requests (rate "
            f"limited (429 after the retries) {refused}); lower --concurrency or raise "
            "--retries") in out.splitlines()


def test_retry_after_is_honoured_but_never_beyond_the_timeout(mock: EmbeddedMock) -> None:
    """A Retry-After of an hour does not stall the run: the wait is capped by --timeout."""
    with refusing(429, RATE_ERROR, {"Retry-After": "3600"}) as url:
        status, _, err = cli("run", "-q", "--base-url", url, "--model", "m", "--timeout", "1",
                             "--retries", "2")
    assert status == 2
    assert "after 2 retries of the first request" in err


def test_a_model_the_server_does_not_serve_is_one_line(mock: EmbeddedMock) -> None:
    """Every valid completion request 404s (the invalid ones may still get their 400s)."""
    url = mock.openai_url
    one_line(("--base-url", url, "--model", "no-such-model"),
             f"every completion request was answered 404 (POST {url}/completions: \"The model "
             f"`no-such-model` does not exist; …\"): check --model (GET {url}/models lists the "
             "models) and --base-url")
