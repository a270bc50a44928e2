"""Reaching a server the way CI does, for real on loopback: the mock over HTTPS with a private
CA made in the test, mutual TLS, and a forward proxy that records where each client went.

Done when (issue 14): the same run over HTTPS through a proxy gives the verdicts of plain HTTP
with ``--cacert``, and without it exit 2 with a one-line reason; the proxy variables send the
harness where they send the official ``openai`` client.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from network_support import LoopbackProxy, TLSKit, loopback_proxy

from conformance.cli import main
from conformance.target.embedded import EmbeddedMock

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")
SECRET = "s3cret-proxy-pass"


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


def verdicts(path: Path) -> dict[str, str]:
    report = json.loads(path.read_text())
    return {item["rule"]: item["verdict"] for item in report["results"]}


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test sets the proxy and CA variables it means; none come from the machine."""
    for name in (*PROXY_VARIABLES, "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "CURL_CA_BUNDLE"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> TLSKit:
    return TLSKit.make(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def https_mock(kit: TLSKit) -> Iterator[EmbeddedMock]:
    with kit.mock() as server:
        yield server


@pytest.fixture(scope="module")
def mtls_mock(kit: TLSKit) -> Iterator[EmbeddedMock]:
    with kit.mock("--tls-client-ca", kit.ca) as server:
        yield server


@pytest.fixture
def proxy() -> Iterator[LoopbackProxy]:
    with loopback_proxy() as server:
        yield server


def host_port(url: str) -> str:
    return url.split("://", 1)[1].split("/", 1)[0]


def test_https_through_a_proxy_gives_the_verdicts_of_plain_http(
    mock: EmbeddedMock, https_mock: EmbeddedMock, kit: TLSKit, proxy: LoopbackProxy,
    tmp_path: Path,
) -> None:
    plain, tls = tmp_path / "plain.json", tmp_path / "tls.json"
    status, _, err = cli("run", "--base-url", mock.openai_url, "-q", "--json", str(plain))
    assert status == 0, err
    assert not proxy.targets
    status, out, err = cli("run", "--base-url", https_mock.openai_url, "--cacert", kit.ca,
                           "--proxy", proxy.url, "-q", "--json", str(tls))
    assert status == 0, err
    assert verdicts(tls) == verdicts(plain)
    assert proxy.targets and set(proxy.targets) == {host_port(https_mock.openai_url)}
    assert f"through the proxy {proxy.url}" in out
    assert json.loads(tls.read_text())["connection"]["proxy"] == proxy.url


@pytest.mark.parametrize("model", [(), ("--model", "reference-ngram")])
def test_an_untrusted_certificate_is_exit_2_and_one_line(
    https_mock: EmbeddedMock, model: tuple[str, ...]
) -> None:
    status, out, err = cli("run", "--base-url", https_mock.openai_url, "-q", *model)
    assert status == 2 and not out
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "cannot verify the TLS certificate" in err and "pass --cacert FILE" in err


@pytest.mark.parametrize("variable", ["REQUESTS_CA_BUNDLE", "SSL_CERT_FILE"])
def test_the_ca_bundle_variables_are_read_as_the_ecosystem_reads_them(
    https_mock: EmbeddedMock, kit: TLSKit, variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(variable, kit.ca)
    status, out, err = cli("run", "--base-url", https_mock.openai_url, "-q",
                           "--select", "USAGE-00*")
    assert status == 0, err
    assert f"trusting the CA bundle {kit.ca}" in out


def test_a_ca_bundle_variable_goes_unsaid_for_a_plain_http_target(
    mock: EmbeddedMock, kit: TLSKit, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``$SSL_CERT_FILE`` is set on many CI machines: for an ``http://`` URL it is not used,
    so neither the report nor a failure's curl command names it."""
    monkeypatch.setenv("SSL_CERT_FILE", kit.ca)
    status, out, err = cli("run", "--base-url", mock.openai_url, "-q", "--select", "USAGE-*",
                           "--header", "X-Mock-Fault: usage-total-wrong")
    assert status == 1, err
    assert "curl -sS http://" in out
    assert "CA bundle" not in out and "--cacert" not in out and kit.ca not in out


def test_insecure_works_and_every_report_says_the_run_was_weakened(
    https_mock: EmbeddedMock, tmp_path: Path
) -> None:
    report, page = tmp_path / "r.json", tmp_path / "r.html"
    status, out, err = cli("run", "--base-url", https_mock.openai_url, "--insecure", "-q",
                           "--select", "USAGE-00*", "--json", str(report), "--html", str(page))
    assert status == 0, err
    assert "WEAKENED RUN" in out.split("\n\n", 1)[0]  # in the header
    data = json.loads(report.read_text())
    assert data["weakened"] is True and data["connection"]["insecure"] is True
    assert "WEAKENED RUN" in page.read_text()
    junit = tmp_path / "r.xml"
    status, _, err = cli("run", "--base-url", https_mock.openai_url, "--insecure", "-q",
                         "--select", "USAGE-001", "--junit-xml", str(junit))
    assert status == 0, err
    assert '<property name="weakened" value="true"' in junit.read_text()


def test_mutual_tls_needs_the_client_certificate(mtls_mock: EmbeddedMock, kit: TLSKit) -> None:
    status, _, err = cli("run", "--base-url", mtls_mock.openai_url, "--cacert", kit.ca, "-q",
                         "--select", "USAGE-00*")
    assert status == 2 and len(err.splitlines()) == 1
    assert "--cert FILE --key FILE" in err
    status, out, err = cli("run", "--base-url", mtls_mock.openai_url, "--cacert", kit.ca,
                           "--cert", kit.client_cert, "--key", kit.client_key, "-q",
                           "--select", "USAGE-00*")
    assert status == 0, err
    assert f"with the client certificate {kit.client_cert}" in out


def test_proxy_credentials_never_appear_and_curl_goes_through_the_proxy(
    https_mock: EmbeddedMock, kit: TLSKit, tmp_path: Path
) -> None:
    files = [tmp_path / name for name in ("r.json", "r.xml", "r.html")]
    with loopback_proxy(credentials=("ci", SECRET)) as proxy:
        status, out, err = cli(
            "run", "--base-url", https_mock.openai_url, "--cacert", kit.ca,
            "--proxy", proxy.url_with_credentials(), "--select", "USAGE-*",
            "--header", "X-Mock-Fault: usage-total-wrong", "--json", str(files[0]),
            "--junit-xml", str(files[1]), "--html", str(files[2]))
        assert status == 1, err
        assert proxy.targets and not proxy.refused
    assert f'curl -sS --proxy "$PROXY" --cacert {kit.ca} https://' in out
    assert "export PROXY" in out
    for text in (out, err, *(path.read_text() for path in files)):
        assert SECRET not in text


def test_a_proxy_asking_for_credentials_is_exit_2_naming_the_flag(
    https_mock: EmbeddedMock, kit: TLSKit
) -> None:
    with loopback_proxy(credentials=("ci", SECRET)) as proxy:
        status, _, err = cli("run", "--base-url", https_mock.openai_url, "--cacert", kit.ca,
                             "--proxy", proxy.url, "-q")
    assert status == 2 and len(err.splitlines()) == 1
    assert "check --proxy" in err and "407" in err


def test_fuzz_goes_through_the_proxy_with_the_run_s_trust(
    https_mock: EmbeddedMock, kit: TLSKit, monkeypatch: pytest.MonkeyPatch
) -> None:
    with loopback_proxy(credentials=("ci", SECRET)) as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url_with_credentials())
        status, out, err = cli("fuzz", "--base-url", https_mock.openai_url, "--cacert", kit.ca,
                               "--max-examples", "2", "--phases", "examples",
                               "--max-requests", "8", "--seed", "1", "-q")
        assert status == 0, out + err
        assert proxy.targets and not proxy.refused
    assert SECRET not in out + err
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with loopback_proxy() as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        status, out, err = cli("fuzz", "--base-url", https_mock.openai_url, "--cacert", kit.ca,
                               "--max-examples", "2", "--phases", "examples",
                               "--max-requests", "8", "--seed", "1", "-q")
        assert status == 0, out + err
        assert not proxy.targets


def test_fuzz_findings_reproduce_the_way_the_run_went_and_say_it_was_weakened(
    https_mock: EmbeddedMock, tmp_path: Path
) -> None:
    report, junit = tmp_path / "fuzz.json", tmp_path / "fuzz.xml"
    with loopback_proxy(credentials=("ci", SECRET)) as proxy:
        status, out, err = cli(
            "fuzz", "--base-url", https_mock.openai_url, "--insecure",
            "--proxy", proxy.url_with_credentials(), "--header", "X-Mock-Fault: usage-total-wrong",
            "--max-examples", "2", "--phases", "examples", "--no-shrink", "--seed", "1", "-q",
            "--json", str(report), "--junit-xml", str(junit))
        assert status == 1, out + err
        assert proxy.targets and not proxy.refused
    assert "WEAKENED RUN" in out.split("seed:", 1)[0]  # said before anything else
    assert '<property name="weakened" value="true"' in junit.read_text()
    data = json.loads(report.read_text())
    assert data["connection"]["insecure"] is True and data["connection"]["weakened"] is True
    found = [f for result in data["results"] for f in result["findings"]]
    assert found
    for finding in found:
        assert finding["curl"].startswith('curl -sS --proxy "$PROXY" --insecure https://'), finding
    assert SECRET not in out + err + report.read_text()


PLUGIN_TEST = '''
def test_own(conformance_client):
    assert conformance_client.complete({"prompt": "Hi", "max_tokens": 4}).status == 200
'''


def test_the_pytest_plugin_goes_through_the_proxy(
    https_mock: EmbeddedMock, kit: TLSKit, proxy: LoopbackProxy, tmp_path: Path
) -> None:
    (tmp_path / "test_own.py").write_text(PLUGIN_TEST)
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=",
               "--rootdir", str(tmp_path), str(tmp_path), "-q",
               "--conformance-url", https_mock.openai_url, "--conformance-cacert", kit.ca,
               "--conformance-select", "USAGE-00*"]
    env = {**os.environ, "HTTPS_PROXY": proxy.url}
    done = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert proxy.targets and set(proxy.targets) == {host_port(https_mock.openai_url)}


def openai_went_through(url: str, proxy: LoopbackProxy) -> bool:
    before = len(proxy.targets)
    client = openai.OpenAI(base_url=url, api_key="sk-test", max_retries=0, timeout=30)
    try:
        client.completions.create(model="reference-ngram", prompt="Hi", max_tokens=4)
    finally:
        client.close()
    return len(proxy.targets) > before


def harness_went_through(url: str, proxy: LoopbackProxy) -> bool:
    before = len(proxy.targets)
    status, _, err = cli("run", "--base-url", url, "-q", "--select", "USAGE-001")
    assert status == 0, err
    return len(proxy.targets) > before


ENVIRONMENTS = [
    ({"HTTP_PROXY": "{proxy}"}, True),
    ({"http_proxy": "{proxy}"}, True),
    ({"ALL_PROXY": "{proxy}"}, True),
    ({"HTTPS_PROXY": "{proxy}"}, False),  # the URL is http://
    ({"HTTP_PROXY": "{proxy}", "NO_PROXY": "127.0.0.1"}, False),
    ({"HTTP_PROXY": "{proxy}", "no_proxy": "localhost,example.com"}, True),
    ({"HTTP_PROXY": "{proxy}", "NO_PROXY": "*"}, False),
    ({"HTTP_PROXY": "{proxy}", "NO_PROXY": "127.0.0.0/8"}, False),
    ({"HTTP_PROXY": "{proxy}", "NO_PROXY": "127.0.0.1:1"}, True),  # another port
    ({"HTTP_PROXY": "http://127.0.0.1:9", "http_proxy": "{proxy}"}, True),  # lower case wins
]


@pytest.mark.parametrize(("environment", "proxied"), ENVIRONMENTS)
def test_the_proxy_variables_send_the_harness_where_they_send_openai(
    mock: EmbeddedMock, proxy: LoopbackProxy, environment: dict[str, str], proxied: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in environment.items():
        monkeypatch.setenv(name, value.format(proxy=proxy.url))
    assert openai_went_through(mock.openai_url, proxy) is proxied
    assert harness_went_through(mock.openai_url, proxy) is proxied
