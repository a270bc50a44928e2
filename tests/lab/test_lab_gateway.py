"""A gateway in the lab (no server started): how Portkey is launched in front of our mock or
of another lab server, how its routing headers reach a live run but not a replay, how its
recordings in front of another server are named, and its npm pin."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lab.record import recordings_of
from lab.servers import LOOPBACK_PRELOAD, SERVERS, Recording, _write_npm_overrides
from lab.sockets import _address

PORTKEY = SERVERS["portkey"]
ROUTED = Recording("gw-openai", "openai", args=(
    "--timeout", "3", "--header", "x-portkey-provider: openai",
    "--header", "x-portkey-custom-host: {upstream}"))


def test_a_live_run_routes_to_the_upstream_and_a_replay_goes_without_the_headers() -> None:
    assert ROUTED.arguments("http://127.0.0.1:9/v1") == [
        "--timeout", "3", "--header", "x-portkey-provider: openai",
        "--header", "x-portkey-custom-host: http://127.0.0.1:9/v1"]
    assert ROUTED.replay_arguments() == ["--timeout", "3"]


def test_every_portkey_run_names_its_provider_and_upstream() -> None:
    for recording in PORTKEY.recordings:
        assert "x-portkey-provider: openai" in recording.arguments("U")
        assert "x-portkey-custom-host: U" in recording.arguments("U")


def test_a_gateway_starts_beside_our_mock_by_default_and_on_loopback() -> None:
    launch = PORTKEY.launch(8000)
    assert launch.upstream.startswith("http://127.0.0.1:") and launch.upstream.endswith("/v1")
    shell = launch.command[-1]
    port = launch.upstream.rsplit(":", 1)[1].removesuffix("/v1")
    assert f"-m mockserver --port {port} & exec node --require {LOOPBACK_PRELOAD}" in shell
    assert shell.endswith("--port=8000 --headless")


def test_in_front_of_a_lab_server_no_mock_is_started() -> None:
    launch = PORTKEY.launch(8000, "http://127.0.0.1:9/v1")
    assert launch.upstream == "http://127.0.0.1:9/v1"
    assert launch.command[:3] == ["node", "--require", str(LOOPBACK_PRELOAD)]
    assert "mockserver" not in " ".join(launch.command)


def test_a_server_that_is_no_gateway_takes_no_upstream() -> None:
    with pytest.raises(SystemExit, match="no gateway"):
        SERVERS["prism"].launch(8000, "http://127.0.0.1:9/v1")
    assert SERVERS["prism"].launch(8000).upstream == ""


def test_recordings_in_front_of_another_server_are_named_after_it() -> None:
    names = [r.name for r in recordings_of(PORTKEY, SERVERS["vllm"])]
    assert names == ["portkey-via-vllm-openai", "portkey-via-vllm-openai-compatible"]
    found = PORTKEY.recording("portkey-via-vllm-openai-compatible")
    assert (found.profile_name, found.args) == ("openai-compatible", PORTKEY.recordings[1].args)
    assert [r.name for r in recordings_of(PORTKEY, None)] == [
        "portkey-openai", "portkey-openai-compatible"]


def test_the_npm_override_is_written_before_the_install_and_marks_it(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text('{"dependencies": {"x": "1"}}')
    _write_npm_overrides(tmp_path, dict(PORTKEY.npm_overrides))
    manifest = json.loads((tmp_path / "package.json").read_text())
    assert manifest == {"dependencies": {"x": "1"}, "private": True,
                        "overrides": {"@hono/node-server": "1.14.1"}}
    assert PORTKEY.install_spec() == "@portkey-ai/gateway@1.15.2 @hono/node-server=1.14.1"
    assert SERVERS["prism"].install_spec() == "@stoplight/prism-cli@5.16"


@pytest.mark.parametrize(("raw", "address"), [
    ("0100007F", "127.0.0.1"),
    ("00000000", "0.0.0.0"),
    ("00000000000000000000000001000000", "::1"),
    ("0000000000000000FFFF00000100007F", "127.0.0.1"),
    ("00000000000000000000000000000000", "::"),
])
def test_the_kernels_socket_addresses_are_read(raw: str, address: str) -> None:
    assert _address(raw) == address
