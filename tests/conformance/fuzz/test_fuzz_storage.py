"""Where hypothesis' files go: the user's cache directory, by the platform's rules."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import configuration

from conformance.fuzz.storage import hypothesis_home, user_cache_dir

HOME = Path("/home/ada")


@pytest.mark.parametrize(("environ", "platform", "expected"), [
    ({"XDG_CACHE_HOME": "/var/cache/ada"}, "linux", "/var/cache/ada/completions-conformance"),
    ({}, "linux", "/home/ada/.cache/completions-conformance"),
    # the XDG specification: a relative path is invalid and is ignored
    ({"XDG_CACHE_HOME": "relative"}, "linux", "/home/ada/.cache/completions-conformance"),
    ({}, "darwin", "/home/ada/Library/Caches/completions-conformance"),
    ({"XDG_CACHE_HOME": "/xdg"}, "darwin", "/xdg/completions-conformance"),
    ({"LOCALAPPDATA": "/appdata"}, "win32", "/appdata/completions-conformance/Cache"),
])
def test_the_cache_directory_follows_xdg_then_the_platform(
        environ: dict[str, str], platform: str, expected: str) -> None:
    assert user_cache_dir(environ, platform=platform, home=HOME) == Path(expected)


def test_hypothesis_home_is_set_for_the_block_and_restored(tmp_path: Path) -> None:
    before = configuration.storage_directory(intent_to_write=False).home_directory
    with hypothesis_home(tmp_path):
        assert configuration.storage_directory("examples", intent_to_write=False).path == (
            tmp_path / "examples")
    assert configuration.storage_directory(intent_to_write=False).home_directory == before
