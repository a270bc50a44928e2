"""A seed draws the same requests wherever the harness runs: hypothesis' pool of "local"
constants is kept empty during a fuzz run.

Hypothesis (6.131 and later) sometimes draws a constant instead of a random value, from a global
list and from the constants of every loaded module it counts as the user's own code: any module
outside site-packages and the standard library (``_get_local_constants`` in
``hypothesis.internal.conjecture.providers``). For a fuzz run that pool depends on how the
harness was installed (an editable install counts the harness's own modules, an installed wheel
does not) and on which version of it runs (every string and number of the harness's source
joins it), and on whatever else the process imported (a test suite's modules). A ``--seed`` then
drew other requests after an unrelated change to the harness, and the run that reproduced a
finding on one machine missed it on another. During a run the pool is empty, so what a seed
draws depends on the seed, the profile's document and the versions of hypothesis and
schemathesis only. The global constants stay: they are the same everywhere.

The hook is a private function of hypothesis; when it is not there (another version), the run
goes on with hypothesis' own behaviour.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

_lock = threading.Lock()
_depth = 0
_saved: Callable[[], Any] | None = None


def _providers() -> Any:
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - a hypothesis without the module
        return None
    return providers if hasattr(providers, "_get_local_constants") else None


def _clear_cache(providers: Any) -> None:
    """Forget the pools hypothesis cached from the constants it had (its own way to do it)."""
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    inner = getattr(cache, "cache", None)
    if inner is not None and hasattr(inner, "clear"):
        inner.clear()


@contextlib.contextmanager
def no_local_constants() -> Iterator[None]:
    """Keep hypothesis' local-constant pool empty for the length of the block (reentrant: the
    outermost block restores it)."""
    global _depth, _saved
    providers = _providers()
    if providers is None:
        yield
        return
    with _lock:
        if _depth == 0:
            from hypothesis.internal.constants_ast import Constants

            empty = Constants()
            _saved = providers._get_local_constants
            providers._get_local_constants = lambda: empty
            _clear_cache(providers)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                providers._get_local_constants = _saved
                _saved = None
                _clear_cache(providers)
