"""The C heap of a process: large buffers go back to the OS when freed (glibc only).

glibc serves an allocation from its heap below ``M_MMAP_THRESHOLD`` and with its own ``mmap``
above, and by default *raises* that threshold to the size of any mmapped block freed, up to
32 MiB; after one large block every later buffer up to that size comes from the heap, whose
free space fragmentation keeps. Fixing the threshold (setting it turns the adjustment off)
sends every large buffer back to the OS when it is freed. Blocks that large are rare and each
costs a system call, which is nothing beside building it. Measured on both sides:

- the mock: one echo-scoring answer (29 MB) left RSS 55-130 MB above its start after a few
  hostile requests, and ``malloc_trim`` could not return it; with the threshold fixed RSS
  returned to within ~2 MB (``benchmarks/bench_hostile.py``);
- the harness, against a server sending the largest bodies its limits allow
  (:mod:`conformance.transport.limits`): peak RSS grew to about three times what it held (a
  30-example fuzz: 380 MB of RSS for under 160 MB of live objects); fixed, what the limits
  bound is what the process holds.

Elsewhere than glibc (macOS, musl) both calls do nothing: those allocators return large blocks
by themselves. The C library is looked up on first use, so importing this module costs nothing
(the harness's pytest plugin must stay cheap to import).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys
from typing import Any

M_MMAP_THRESHOLD = -3
"""glibc's ``mallopt`` parameter number (``malloc.h``)."""
MMAP_THRESHOLD = 128 * 1024
"""glibc's default starting value, kept fixed: blocks above it are mapped, and unmapped when
freed."""


@functools.cache
def _libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None


@functools.cache
def fix_mmap_threshold() -> bool:
    """Fix glibc's mmap threshold for this process (once); whether it was set."""
    mallopt = getattr(_libc(), "mallopt", None)
    if mallopt is None:  # not glibc
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1)


def trim() -> None:
    """Return free heap pages to the OS (``malloc_trim(0)``)."""
    malloc_trim = getattr(_libc(), "malloc_trim", None)
    if malloc_trim is not None:
        malloc_trim(0)
