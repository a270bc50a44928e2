"""Fixtures of the harness's proof tests: one embedded mock child process per session."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.embedded import EmbeddedMock


@pytest.fixture(autouse=True)
def user_cache(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
               ) -> Path:
    """A cache directory of the test's own (``$XDG_CACHE_HOME``): fuzz runs keep hypothesis'
    files there, and a test must neither write the user's cache nor replay what another test
    saved in it."""
    cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache


@pytest.fixture(scope="session")
def mock() -> Iterator[EmbeddedMock]:
    """The mock server, started once (``python -m mockserver --port 0``), stopped at the end."""
    with EmbeddedMock() as server:
        yield server


@pytest.fixture(scope="session")
def mock_faults(mock: EmbeddedMock) -> dict[str, dict]:
    """``GET /mock/faults``: every fault with its description and wire profiles."""
    root = mock.openai_url.rsplit("/v1", 1)[0]
    with urllib.request.urlopen(root + "/mock/faults", timeout=10) as response:
        listing = json.load(response)
    return {item["name"]: item for item in listing["data"]}
