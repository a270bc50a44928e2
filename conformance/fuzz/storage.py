"""Where a fuzz run keeps hypothesis' files: the user's cache directory, never the current one.

Hypothesis writes two kinds of files. The example database keeps the examples that failed, so
that the next run replays them first (``--example-db DIR``, or a Redis database shared by
several machines, :mod:`conformance.fuzz.example_db`; with ``--keep-examples``
``<cache>/completions-conformance/hypothesis/examples``). Its own storage directory keeps caches
such as the constants it collects from the source code; hypothesis puts it in ``.hypothesis/``
of the directory the process *started* in (``hypothesis.configuration``, 6.170), so a fuzz run
left that folder wherever it was launched. :func:`hypothesis_home` moves it for the length of a
run and puts back what was there, since the setting is global to the process.

The cache directory follows the XDG base directory specification (``$XDG_CACHE_HOME``, else
``~/.cache``) and the platforms' own places on macOS and Windows. The environment is read by
the caller (:func:`user_cache_dir`'s arguments), not deep inside the engine.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path

from hypothesis import configuration

APP = "completions-conformance"


def user_cache_dir(environ: Mapping[str, str], *, platform: str, home: Path) -> Path:
    """This tool's cache directory: ``$XDG_CACHE_HOME/completions-conformance`` when that is
    an absolute path (the specification says to ignore a relative one), else the platform's
    usual place under ``home``."""
    xdg = environ.get("XDG_CACHE_HOME", "")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / APP
    if platform == "darwin":
        return home / "Library" / "Caches" / APP
    if platform.startswith("win"):
        local = environ.get("LOCALAPPDATA", "")
        return (Path(local) if local else home / "AppData" / "Local") / APP / "Cache"
    return home / ".cache" / APP


def hypothesis_dir(cache: Path) -> Path:
    """Hypothesis' storage directory inside the cache directory ``cache``."""
    return cache / "hypothesis"


def default_example_db(hypothesis_home: Path) -> Path:
    """The example database's default place: ``examples`` under hypothesis' storage, where
    hypothesis itself would keep it."""
    return hypothesis_home / "examples"


@contextlib.contextmanager
def hypothesis_home(path: Path) -> Iterator[None]:
    """Hypothesis' storage directory is ``path`` inside the block, then what it was before."""
    # storage_directory() with no names is the home itself; it never creates it
    previous = configuration.storage_directory(intent_to_write=False).home_directory
    configuration.set_hypothesis_home_dir(path)
    try:
        yield
    finally:
        configuration.set_hypothesis_home_dir(previous)
