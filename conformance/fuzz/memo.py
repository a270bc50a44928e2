"""What the harness derives from one fuzzed response, computed once and dropped before the next.

Schemathesis hands the same response to its deserializer (the contract's stream schema) and
to every registered check (one per rule); each needs the same parsed stream and the same
:class:`~conformance.bindings.sample.Sample`. Parsing a 16 MiB stream once per reader took a
run against a flood of 512 KB events past 300 MB, and a cache that outlived its response kept
one more response alive. So the memo holds the values of one response per thread, and the
guarded transport (:mod:`conformance.fuzz.transport`) calls :func:`forget` before it sends the
next request, when the previous response's readers are done.

Dropping is not always freeing: a check's frames, generators and closures form reference
cycles with its context, its parsed views and the exchange, and only the cycle collector frees
those. Its thresholds count objects, not bytes, so a 16 MiB body in a cycle can wait for many
responses; :func:`forget` runs it after a large response (:data:`LARGE_BYTES`), which a
well-behaved server's answers to the fuzzer's capped requests never are.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_LOCAL = threading.local()

LARGE_BYTES = 1 << 20
"""A response body this large is freed by a collection as soon as its readers are done."""


def remembered(owner: object, key: str, make: Callable[[], T]) -> T:
    """``make()``, computed once for ``owner`` (compared by identity) and ``key`` in this thread."""
    entry: tuple[object, dict[str, Any]] | None = getattr(_LOCAL, "entry", None)
    if entry is None or entry[0] is not owner:
        entry = (owner, {})
        _LOCAL.entry = entry
    values = entry[1]
    if key not in values:
        values[key] = make()
    return values[key]  # type: ignore[no-any-return]


def forget() -> None:
    """Drop this thread's remembered values (and with them the response they came from)."""
    entry: tuple[object, dict[str, Any]] | None = getattr(_LOCAL, "entry", None)
    _LOCAL.entry = None
    content = getattr(entry[0], "content", None) if entry is not None else None
    del entry
    if isinstance(content, bytes) and len(content) >= LARGE_BYTES:
        del content
        gc.collect()
