"""The mock on loopback for the property tests: one child process per session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance.target.embedded import EmbeddedMock


@pytest.fixture(scope="session")
def live_mock() -> Iterator[EmbeddedMock]:
    with EmbeddedMock() as server:
        yield server
