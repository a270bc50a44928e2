"""Secret redaction and curl commands that paste as they are."""

from __future__ import annotations

import asyncio
import json
import shlex
import shutil
import subprocess

import pytest
from transport_servers import serve_app

from conformance.transport import (
    REDACTED,
    Exchange,
    Network,
    RecordedRequest,
    Termination,
    Timings,
    is_secret_header,
    open_session,
    record,
    redact_headers,
    redact_url,
    secret_variable,
    to_curl,
)


@pytest.mark.parametrize(
    "name",
    [
        "Authorization",
        "authorization",
        "Proxy-Authorization",
        "Cookie",
        "X-Api-Key",
        "api-key",
        "X-Auth-Token",
        "Client-Secret",
        "OpenAI-Organization-KEY",
    ],
)
def test_secret_headers(name: str) -> None:
    assert is_secret_header(name)


@pytest.mark.parametrize(
    "name", ["Content-Type", "Accept", "Keep-Alive", "X-Request-Id", "OpenAI-Organization"]
)
def test_ordinary_headers(name: str) -> None:
    assert not is_secret_header(name)


def test_redact_headers_keeps_order_case_and_repeats() -> None:
    headers = [
        ("Authorization", "Bearer sk-1"),
        ("X-Org", "acme"),
        ("x-org", "b"),
        ("Api-Key", "k"),
    ]
    assert redact_headers(headers, secret_headers=["X-ORG"]) == (
        ("Authorization", REDACTED),
        ("X-Org", REDACTED),
        ("x-org", REDACTED),
        ("Api-Key", REDACTED),
    )
    assert redact_headers({"Accept": "text/event-stream"}) == (("Accept", "text/event-stream"),)


def test_redact_url() -> None:
    assert redact_url("https://h/v1/completions") == "https://h/v1/completions"
    assert redact_url("https://h/x?key=abc&model=m") == "https://h/x?key=<redacted>&model=m"
    assert redact_url("https://u:pw@h:8/x") == "https://u:<redacted>@h:8/x"
    assert redact_url("https://h/x?org=1", secret_params=["org"]) == "https://h/x?org=<redacted>"


PROMPT = 'it\'s a "test"\nwith $HOME, `ticks`, \\ and ünïcödé'


def request(**overrides: object) -> RecordedRequest:
    body = json.dumps({"model": "m", "prompt": PROMPT, "stream": True}).encode()
    fields: dict[str, object] = {
        "method": "POST",
        "url": "http://127.0.0.1:8000/v1/completions?a=1&b=2",
        "headers": (
            ("Authorization", REDACTED),
            ("Content-Type", "application/json"),
            ("X-Note", "it's"),
            ("Host", "ignored"),
        ),
        "body": body,
    }
    fields.update(overrides)
    return RecordedRequest(**fields)  # type: ignore[arg-type]


def test_curl_quotes_survive_shlex_split() -> None:
    command = to_curl(request())
    argv = shlex.split(command)
    assert argv[:3] == ["curl", "-sS", "-N"]
    assert "http://127.0.0.1:8000/v1/completions?a=1&b=2" in argv
    assert argv[argv.index("--data-raw") + 1] == request().body.decode()
    assert json.loads(argv[argv.index("--data-raw") + 1])["prompt"] == PROMPT
    assert "X-Note: it's" in argv and "Host: ignored" not in argv and "-X" not in argv
    assert '-H "Authorization: Bearer $OPENAI_API_KEY"' in command


def test_curl_with_literal_newline_and_quote_in_raw_body() -> None:
    req = request(body=PROMPT.encode(), headers=())
    argv = shlex.split(to_curl(req, stream=False))
    assert argv[-1] == PROMPT and "-N" not in argv


def test_curl_redacts_live_secrets_unless_told_not_to() -> None:
    req = request(headers=(("Authorization", "Bearer sk-live"), ("X-Api-Key", "k1")))
    redacted = to_curl(req)
    assert "sk-live" not in redacted and "k1" not in redacted
    assert '-H "X-Api-Key: $X_API_KEY"' in redacted
    assert "Authorization: Bearer sk-live" in shlex.split(to_curl(req, redact=False))
    # a value recorded as <redacted> stays a variable even without redaction
    assert "$OPENAI_API_KEY" in to_curl(request(), redact=False)


def test_curl_method_and_odd_secret_names() -> None:
    req = request(method="GET", body=b"", headers=(("X-$Weird!Token", REDACTED),))
    command = to_curl(req, stream=False)
    assert command.startswith("curl -sS 'http") and "-X" not in command
    assert shlex.split(command)[-1] == "X-$Weird!Token: $X_WEIRD_TOKEN"
    assert secret_variable("1-key") == "_1_KEY"
    assert " -X DELETE " in to_curl(request(method="DELETE", body=b""))


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_curl_binary_body_uses_printf_and_bash_reproduces_the_bytes() -> None:
    body = bytes(range(256)) + b"%s\\0'"
    command = to_curl(request(body=body), stream=False)
    substitution = command.split("--data-binary @<(", 1)[1][:-1]
    assert substitution.startswith("printf %b ")
    assert subprocess.run(["bash", "-c", substitution], capture_output=True).stdout == body


def test_curl_names_the_tls_files_only_for_https() -> None:
    """A CA bundle from ``$SSL_CERT_FILE`` rides along on every run: a plain HTTP command
    that names it reads as if the run used TLS. The proxy applies to both schemes."""
    network = Network(cacert="/ca.pem", cert="/c.pem", key="/c.key", insecure=True,
                      proxy="http://proxy.test:3128")
    plain = shlex.split(to_curl(request(network=network)))
    assert plain[plain.index("--proxy") + 1] == "$PROXY"
    assert not {"--cacert", "--cert", "--key", "--insecure"} & set(plain)
    tls = shlex.split(to_curl(request(network=network,
                                      url="https://127.0.0.1:8443/v1/completions")))
    assert tls[tls.index("--cacert") + 1] == "/ca.pem"
    assert {"--proxy", "--cert", "--key", "--insecure"} <= set(tls)


def exchange_for(req: RecordedRequest, *, is_sse: bool) -> Exchange:
    return Exchange(request=req, termination=Termination.EOF, timings=Timings(0.0), is_sse=is_sse)


def test_curl_stream_flag_follows_the_exchange() -> None:
    plain = request(body=b'{"stream": false}')
    assert "-N" not in shlex.split(to_curl(exchange_for(plain, is_sse=False)))
    assert "-N" in shlex.split(to_curl(exchange_for(plain, is_sse=True)))


@pytest.mark.skipif(
    shutil.which("curl") is None or shutil.which("bash") is None, reason="needs curl and bash"
)
def test_curl_command_replays_the_recorded_request() -> None:
    """Paste the command into bash against a real server: the server sees the same request."""

    async def go() -> None:
        async with serve_app() as base, open_session() as session:
            ex = await record(
                session,
                "POST",
                base + "/echo",
                json_body={"prompt": PROMPT},
                headers={"Authorization": "Bearer sk-xyz", "X-Note": "it's"},
            )
            command = to_curl(ex)
            proc = await asyncio.create_subprocess_exec(
                "bash",
                "-c",
                command,
                env={"OPENAI_API_KEY": "from-env", "PATH": "/usr/bin:/bin"},
                stdout=subprocess.PIPE,
            )
            out, _ = await proc.communicate()
            original, replayed = json.loads(ex.body), json.loads(out)
            assert replayed["body"] == original["body"]
            assert ["Authorization", "Bearer from-env"] in replayed["headers"]
            assert ["X-Note", "it's"] in replayed["headers"]

    asyncio.run(go())
