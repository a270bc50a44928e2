"""The C heap of a serving process: large buffers go back to the OS when freed (glibc only).

glibc serves an allocation from its heap below ``M_MMAP_THRESHOLD`` and with its own
``mmap`` above, and by default *raises* that threshold to the size of any mmapped block
freed, up to 32 MiB. One echo-scoring answer (29 MB) thus moved every later buffer up to that
size into the heap, where fragmentation keeps it: RSS stayed 55-130 MB above its start after
a few hostile requests, and ``malloc_trim`` could not return it. A fixed threshold (setting
it turns the adjustment off) sends every large buffer back to the OS when it is freed; RSS
returned to within ~2 MB (``benchmarks/bench_hostile.py``). Blocks that large are rare and
each costs a system call, which is nothing beside building it.

Elsewhere than glibc both calls do nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from typing import Any

M_MMAP_THRESHOLD = -3
"""glibc's ``mallopt`` parameter number (malloc.h)."""
MMAP_THRESHOLD = 128 * 1024
"""glibc's default starting value, kept fixed."""


def _libc() -> Any:
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name) if name else None
    except OSError:
        return None


_LIBC = _libc()


def fix_mmap_threshold() -> bool:
    """Fix glibc's mmap threshold for this process; whether it was set."""
    mallopt = getattr(_LIBC, "mallopt", None)
    return bool(mallopt is not None and mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1)


def trim() -> None:
    """Return free heap pages to the OS (``malloc_trim(0)``)."""
    malloc_trim = getattr(_LIBC, "malloc_trim", None)
    if malloc_trim is not None:
        malloc_trim(0)
