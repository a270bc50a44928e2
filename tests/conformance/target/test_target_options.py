"""One table of target options drives ``conformance run``, ``conformance fuzz`` and the pytest
plugin: each row's flags must give the same :class:`~conformance.run.settings.Settings` in all three
(``--NAME`` on the command line, ``--conformance-NAME`` in pytest)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from network_support import TLSKit, loopback_proxy

import conformance.fuzz.cli  # noqa: F401 - imported once: pytester forgets what a test imports
from conformance.cli import _parser
from conformance.errors import UsageError
from conformance.pytest_plugin.support import settings_for
from conformance.run.settings import Settings
from conformance.target.embedded import EmbeddedMock
from conformance.target.opening import open_target
from conformance.target.options import TARGET_OPTIONS, target_from_args
from conformance.target.resolved import resolve_target

pytest_plugins = ["pytester"]

ROWS: list[tuple[list[str], Callable[[Settings], Any], Any]] = [
    ([], lambda s: (s.profile.name, s.max_tokens, s.limits.total_time, s.max_requests),
     ("openai", 16, 60.0, None)),
    (["--profile", "openai-compatible"], lambda s: s.profile.name, "openai-compatible"),
    (["--model", "other-model"], lambda s: s.model, "other-model"),
    (["--api-key", "sk-row"], lambda s: s.request_headers()[0], ("Authorization", "Bearer sk-row")),
    (["--header", "X-A: 1", "--header", "X-B: 2"], lambda s: s.headers,
     (("X-A", "1"), ("X-B", "2"))),
    (["--no-feature", "echo", "--no-feature", "seed"],
     lambda s: {"echo", "seed"} & s.features, set()),
    (["--profile", "openai-compatible", "--feature", "best_of"],
     lambda s: "best_of" in s.features, True),
    (["--max-tokens", "7"], lambda s: s.max_tokens, 7),
    (["--max-requests", "9"], lambda s: s.max_requests, 9),
    (["--concurrency", "3"], lambda s: s.concurrency, 3),
    (["--timeout", "12.5"], lambda s: s.limits.total_time, 12.5),
    (["--retries", "5"], lambda s: (s.retries, s.max_retry_wait), (5, 60.0)),
    (["--retries", "0", "--timeout", "7"], lambda s: (s.retries, s.max_retry_wait), (0, 7.0)),
    (["--max-run-memory", "32"], lambda s: s.max_run_bytes, 32 << 20),
    (["--run-timeout", "42"], lambda s: s.run_timeout, 42.0),
    (["--base-url", "{friendli}"], lambda s: s.profile.name, "friendli"),
    (["--cacert", "{ca}"], lambda s: s.network.cacert, "{ca}"),
    (["--cert", "{cert}", "--key", "{key}"], lambda s: (s.network.cert, s.network.key),
     ("{cert}", "{key}")),
    (["--insecure"], lambda s: (s.network.insecure, s.network.weakened), (True, True)),
    (["--proxy", "{proxy}"], lambda s: s.network.proxy, "{proxy}"),
]
"""``{ca}``, ``{cert}``, ``{key}`` and ``{proxy}`` stand for files of a private CA made for the
test and a loopback proxy, ``{friendli}`` for the mock's FriendliAI base URL. Every target is
reached once before a run (its first contact), so the rows aim at the session's mock."""

URL = ""
"""The mock's OpenAI base URL, set by the autouse fixture ``target``."""


@pytest.fixture(autouse=True)
def target(mock: EmbeddedMock) -> None:
    global URL
    URL = mock.openai_url


def cli_settings(command: str, argv: list[str]) -> Settings:
    args = _parser().parse_args([command, "--base-url", URL, "--model", "m0", *argv])
    with open_target(resolve_target(target_from_args(args))) as opened:
        return opened.settings


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """Configs with our plugin only: the test is about its options, not other plugins."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    return pytester


def pytest_settings(pytester: pytest.Pytester, argv: list[str]) -> Settings:
    flags = [f"--conformance-{a[2:]}" if a.startswith("--") else a for a in argv]
    config = pytester.parseconfig("-p", "conformance.pytest_plugin", "--conformance-base-url",
                                  URL, "--conformance-model", "m0", *flags)
    return settings_for(config)


@pytest.fixture(autouse=True)
def no_network_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows say everything: no proxy or CA bundle of the machine's environment."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "REQUESTS_CA_BUNDLE",
                 "SSL_CERT_FILE"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory, mock: EmbeddedMock,
           ) -> Iterator[dict[str, str]]:
    kit = TLSKit.make(Path(tmp_path_factory.mktemp("tls")))
    with loopback_proxy() as proxy:
        yield {"ca": kit.ca, "cert": kit.client_cert, "key": kit.client_key, "proxy": proxy.url,
               "friendli": mock.friendli_url}


def fill(value: Any, places: dict[str, str]) -> Any:
    if isinstance(value, str):
        return value.format(**places)
    if isinstance(value, tuple):
        return tuple(fill(item, places) for item in value)
    return value


@pytest.mark.parametrize("row", range(len(ROWS)))
def test_the_same_flags_mean_the_same_in_run_fuzz_and_pytest(
    row: int, pytester: pytest.Pytester, places: dict[str, str]
) -> None:
    argv, read, want = ROWS[row]
    argv, want = [fill(a, places) for a in argv], fill(want, places)
    assert read(cli_settings("run", argv)) == want
    assert read(cli_settings("fuzz", argv)) == want
    assert read(pytest_settings(pytester, argv)) == want


def test_the_table_is_tried_whole() -> None:
    tried = {a[2:] for argv, _, _ in ROWS for a in argv if a.startswith("--")}
    assert tried | {"base-url"} == {option.name for option in TARGET_OPTIONS}


@pytest.mark.parametrize(("argv", "message"), [
    (["--max-tokens", "3"], "{}max-tokens must be at least 4"),
    (["--concurrency", "0"], "{}concurrency must be at least 1"),
    (["--max-requests", "0"], "{}max-requests must be at least 1"),
    (["--timeout", "0"], "{}timeout must be positive"),
    (["--cacert", "/nonexistent/ca.pem"], "{}cacert '/nonexistent/ca.pem': no such file"),
    (["--key", "/nonexistent/client.key"], "{}key needs {}cert"),
    (["--proxy", "socks5://127.0.0.1:1080"], "the proxy must be an http:// or https:// URL"),
])
def test_a_wrong_flag_is_named_the_way_each_front_end_spells_it(
    argv: list[str], message: str, pytester: pytest.Pytester
) -> None:
    for command in ("run", "fuzz"):
        with pytest.raises(UsageError, match=message.format("--", "--")):
            cli_settings(command, argv)
    with pytest.raises(pytest.UsageError,
                       match=message.format("--conformance-", "--conformance-")):
        pytest_settings(pytester, argv)
