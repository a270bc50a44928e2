"""Large buffers go back to the operating system when the harness frees them.

glibc's ``malloc`` serves a request above its mmap threshold (128 KiB) with a mapping of its
own and unmaps it on ``free``; but each such ``free`` raises the threshold to the freed size
(up to 32 MiB), so after the first 16 MiB body every later one comes from the heap, whose free
space is kept. Against a server sending the largest bodies the limits allow, the harness's
peak RSS then grew to about three times what it held (a 30-example fuzz: 380 MB of RSS for
under 160 MB of live objects). Fixing the threshold (``M_MMAP_THRESHOLD``) turns the dynamic
adjustment off, so what the limits bound (:mod:`conformance.transport.limits`) is what the
process holds. Elsewhere (macOS, musl) this does nothing: those allocators return large
blocks by themselves.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

M_MMAP_THRESHOLD = -3
"""``mallopt``'s parameter number in glibc's ``malloc.h``."""
THRESHOLD = 128 * 1024
"""glibc's own default: blocks above it are mapped, and unmapped when freed."""

_done = False


def return_large_blocks() -> bool:
    """Fix glibc's mmap threshold (once per process); True when it was set."""
    global _done
    if _done or not sys.platform.startswith("linux"):
        return _done
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    _done = bool(mallopt(M_MMAP_THRESHOLD, THRESHOLD))
    return _done
