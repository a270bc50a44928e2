"""Fixtures of the harness's proof tests: one embedded mock child process per session."""

from __future__ import annotations

import json
import shutil
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conformance.target.embedded import EmbeddedMock, serving_args


@pytest.fixture(scope="session")
def session_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's cache directory (one per xdist worker): never the user's own."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(autouse=True)
def user_cache(monkeypatch: pytest.MonkeyPatch, session_cache: Path) -> Path:
    """``$XDG_CACHE_HOME`` for the test, where fuzz runs keep hypothesis' files. Hypothesis' own
    storage stays warm across the session (it caches the constants it collects from the source
    code: seconds of work, which a small --time-budget cannot spare); the example database is
    emptied first, so that no test replays what another one saved."""
    shutil.rmtree(session_cache / "completions-conformance" / "hypothesis" / "examples",
                  ignore_errors=True)
    monkeypatch.setenv("XDG_CACHE_HOME", str(session_cache))
    return session_cache


@pytest.fixture(scope="session")
def mock() -> Iterator[EmbeddedMock]:
    """The mock server, started once (``python -m mockserver --port 0``), stopped at the end."""
    with EmbeddedMock() as server:
        yield server


@pytest.fixture(scope="session")
def served(mock: EmbeddedMock) -> Iterator[Callable[[str], EmbeddedMock]]:
    """The mock serving a profile as ``conformance run --profile NAME`` starts it: the
    session's mock for the profiles its built-in routes answer, else one started with
    ``mockserver --profile NAME`` (``vllm``: it honours the extensions that profile's probes
    send, which the built-in ``/v1`` refuses) on first use, stopped at the session's end."""
    started: dict[str, EmbeddedMock] = {}

    def mock_for(profile_name: str) -> EmbeddedMock:
        args = serving_args(profile_name)
        if not args:
            return mock
        if profile_name not in started:
            started[profile_name] = EmbeddedMock(args).start()
        return started[profile_name]

    try:
        yield mock_for
    finally:
        for server in started.values():
            server.stop()


@pytest.fixture(scope="session")
def mock_faults(mock: EmbeddedMock) -> dict[str, dict]:
    """``GET /mock/faults``: every fault with its description and the wires it bends."""
    root = mock.openai_url.rsplit("/v1", 1)[0]
    with urllib.request.urlopen(root + "/mock/faults", timeout=10) as response:
        listing = json.load(response)
    return {item["name"]: item for item in listing["data"]}
