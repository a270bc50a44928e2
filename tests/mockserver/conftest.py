"""Fixtures: a shared strict mock on loopback, and a factory for specially configured ones."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from mock_live import LiveServer

from mockserver import MockConfig


@pytest.fixture(scope="session")
def server() -> Iterator[LiveServer]:
    """The strict mock: no keys, no faults, no latency, no limits."""
    with LiveServer() as live:
        yield live


@pytest.fixture
def make_server() -> Iterator[Callable[..., LiveServer]]:
    """Start a mock with ``MockConfig(**kwargs)``; stopped at the end of the test."""
    started: list[LiveServer] = []

    def start(**kwargs: object) -> LiveServer:
        live = LiveServer(MockConfig(**kwargs))  # type: ignore[arg-type]
        started.append(live.__enter__())
        return live

    yield start
    for live in started:
        live.__exit__(None, None, None)
