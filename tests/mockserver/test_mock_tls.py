"""``mockserver --tls-cert FILE --tls-key FILE``: the mock over HTTPS, with a private CA made
in the test (``trustme``), and ``--tls-client-ca`` for mutual TLS."""

from __future__ import annotations

import json
import os
import re
import signal
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import trustme

READY = re.compile(r"^mockserver: serving https://127\.0\.0\.1:(\d+)/v1 "
                   r"\(FriendliAI: https://127\.0\.0\.1:\1/dedicated/v1\)$")


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture(scope="module")
def files(ca: trustme.CA, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("tls")
    server = ca.issue_cert("127.0.0.1", "localhost")
    client = ca.issue_cert("client@mock.test")
    paths = {name: str(folder / name) for name in ("ca.pem", "server.pem", "server.key",
                                                    "client.pem", "client.key")}
    ca.cert_pem.write_to_path(paths["ca.pem"])
    server.cert_chain_pems[0].write_to_path(paths["server.pem"])
    server.private_key_pem.write_to_path(paths["server.key"])
    client.cert_chain_pems[0].write_to_path(paths["client.pem"])
    client.private_key_pem.write_to_path(paths["client.key"])
    return paths


@contextmanager
def serving(*args: str) -> Iterator[int]:
    process = subprocess.Popen(
        [sys.executable, "-m", "mockserver", "--port", "0", *args], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        line = process.stdout.readline().rstrip("\n")
        match = READY.match(line)
        assert match, (line, process.stderr.read() if process.poll() is not None else "")
        yield int(match.group(1))
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=20)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def health(port: int, context: ssl.SSLContext) -> dict[str, object]:
    with urllib.request.urlopen(f"https://127.0.0.1:{port}/health", timeout=20,
                                context=context) as response:
        return dict(json.load(response))


def test_the_mock_serves_https_with_the_given_certificate(files: dict[str, str]) -> None:
    with serving("--tls-cert", files["server.pem"], "--tls-key", files["server.key"]) as port:
        trusted = ssl.create_default_context(cafile=files["ca.pem"])
        assert health(port, trusted)
        with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
            health(port, ssl.create_default_context())  # the system does not trust our CA


def test_tls_client_ca_requires_a_client_certificate(files: dict[str, str]) -> None:
    with serving("--tls-cert", files["server.pem"], "--tls-key", files["server.key"],
                 "--tls-client-ca", files["ca.pem"]) as port:
        context = ssl.create_default_context(cafile=files["ca.pem"])
        with pytest.raises((urllib.error.URLError, ssl.SSLError, ConnectionError)):
            health(port, context)
        context.load_cert_chain(files["client.pem"], files["client.key"])
        assert health(port, context)


@pytest.mark.parametrize(("args", "message"), [
    (["--tls-cert", "/nonexistent.pem"], "cannot load --tls-cert '/nonexistent.pem'"),
    (["--tls-key", "x.key"], "--tls-key needs --tls-cert"),
    (["--tls-cert", "x.pem", "--workers", "2"], "--tls-cert serves from one process"),
])
def test_wrong_tls_flags_are_named(args: list[str], message: str, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "mockserver", "--port", "0", *args],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr, done.stderr
