"""One resolved target, opened by one context manager for ``run``, ``fuzz`` and pytest: the
profile object resolved once, the embedded mock started and stopped, the target reached once
and its model discovered."""

from __future__ import annotations

import io
import json
import re
import urllib.error
import urllib.request

import pytest

import spec
from conformance.cli import main
from conformance.errors import HarnessError, UsageError
from conformance.target.embedded import EmbeddedMock
from conformance.target.opening import OpenTarget, open_target
from conformance.target.options import TargetOptions
from conformance.target.resolved import ResolvedTarget, resolve_target


def reachable(base_url: str) -> bool:
    try:
        with urllib.request.urlopen(base_url + "/models", timeout=5):
            return True
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False


def test_the_profile_is_resolved_once_into_the_settings_the_run_gets() -> None:
    target = resolve_target(TargetOptions(base_url="http://127.0.0.1:9/dedicated/v1",
                                          model="endpoint", header=("X-A: 1",)),
                            environ={})
    assert target.profile is spec.get_profile("friendli")
    assert target.settings.profile is target.profile
    assert target.settings.headers == (("X-A", "1"),)
    assert not target.embedded


def test_a_wrong_option_is_named_before_anything_starts() -> None:
    with pytest.raises(UsageError, match="--max-tokens must be at least 4, got 2"):
        resolve_target(TargetOptions(max_tokens=2), embedded=True, environ={})
    options = TargetOptions(base_url="http://127.0.0.1:9/v1", cacert="/nowhere.pem",
                            flag_prefix="--conformance-")
    missing = re.escape("--conformance-cacert '/nowhere.pem': no such file")
    with pytest.raises(UsageError, match=missing):
        resolve_target(options, environ={})


def test_the_environment_gives_a_key_to_a_server_but_never_to_the_embedded_mock() -> None:
    environ = {"CONFORMANCE_API_KEY": "sk-env"}
    server = resolve_target(TargetOptions(base_url="http://127.0.0.1:9/v1"), environ=environ)
    mock = resolve_target(TargetOptions(), embedded=True, environ=environ)
    assert server.settings.api_key == "sk-env"
    assert mock.settings.api_key is None


def test_the_embedded_mock_is_started_reached_and_stopped() -> None:
    target = resolve_target(TargetOptions(), embedded=True, environ={})
    said: list[str] = []
    with open_target(target, announce=said.append) as opened:
        assert said == ["starting the embedded mock server"]
        assert opened.embedded and reachable(opened.settings.base_url)
        assert opened.discovery is not None
        listed = json.loads(opened.discovery.body)["data"][0]["id"]
        assert opened.settings.model == listed
    assert not reachable(opened.settings.base_url)


def test_the_embedded_mock_is_stopped_when_the_run_breaks() -> None:
    target = resolve_target(TargetOptions(model="m0"), embedded=True, environ={})
    with pytest.raises(RuntimeError), open_target(target) as opened:
        url = opened.settings.base_url
        raise RuntimeError("the run broke")
    assert not reachable(url)


def test_a_profile_without_a_listing_finds_its_model_in_the_mocks_openai_listing() -> None:
    target = resolve_target(TargetOptions(profile_ref="friendli"), embedded=True, environ={})
    with open_target(target) as opened:
        assert opened.settings.base_url.endswith("/dedicated/v1")
        assert opened.settings.model and opened.discovery is not None
        assert opened.discovery.request.url.endswith("/v1/models")


def test_a_server_is_reached_once_and_holds_nothing_open(mock: EmbeddedMock) -> None:
    given = resolve_target(TargetOptions(base_url=mock.openai_url, model="m0"), environ={})
    found = resolve_target(TargetOptions(base_url=mock.openai_url), environ={})
    with open_target(given) as opened:
        assert opened == OpenTarget(given.settings, embedded=False)
    with open_target(found) as opened:
        assert opened.settings.model and opened.discovery is not None
    assert reachable(mock.openai_url)


def test_an_unreachable_server_is_one_line() -> None:
    target: ResolvedTarget = resolve_target(
        TargetOptions(base_url="http://127.0.0.1:9/v1", model="m0"), environ={})
    refused = re.escape("cannot connect to 127.0.0.1:9: connection refused")
    with pytest.raises(HarnessError, match=refused), open_target(target):
        pass


def test_a_run_resolves_its_profile_by_name_once(mock: EmbeddedMock,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """``--profile`` becomes a :class:`spec.Profile` once; the rule selection, the settings and
    the first contact take that object (the catalog's 90-odd rules used to look the name up
    again each)."""
    looked_up: list[str] = []
    get_profile = spec.get_profile

    def counting(name: str) -> spec.Profile:
        looked_up.append(name)
        return get_profile(name)

    monkeypatch.setattr(spec, "get_profile", counting)
    status = main(["run", "-q", "--base-url", mock.openai_url, "--profile", "openai",
                   "--select", "USAGE-*"], io.StringIO(), io.StringIO())
    assert status == 0
    assert looked_up == ["openai"]
