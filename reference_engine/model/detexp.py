"""An exponential and a sum that give the same float64 bits on every machine.

Companions of ``detlog`` for the one place the engine normalises at query time: the log-softmax
of processed logits, whose values the API reports. ``numpy.exp`` dispatches to SIMD kernels that
are not correctly rounded and differ in the last bit between machines, and ``numpy.sum`` may
change its accumulation pattern with the SIMD width; both would make reported logprobs differ
between a laptop and CI. Here every step is an IEEE 754 operation in its own NumPy call
(``+ - *``, ``rint``, ``ldexp``), which are exactly rounded, so nothing depends on the CPU.

``detexp``: ``x = k ln2 + r`` (Cody-Waite split of ln2, exact for the k that occur), then
``exp(r) = exp(r/16) ** 16`` with a degree-9 Taylor polynomial for ``exp(r/16)``
(|r/16| <= 0.0217, truncation error < 1e-20); relative error within ~1e-15.
``detsum``: a pairwise sum by halving, in a fixed order.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

INV_LN2 = 1.4426950408889634
LN2_HI = 6.93147180369123816490e-01  # 0x3fe62e42fee00000: trailing zeros, k * LN2_HI is exact
LN2_LO = 1.90821492927058770002e-10
_TAYLOR = tuple(1.0 / float(math.factorial(n)) for n in range(9, -1, -1))
_UNDERFLOW = -745.2  # exp(x) rounds to 0 below this


def detexp(values: FloatArray) -> FloatArray:
    """``exp`` of values <= 0 (``-inf`` allowed, giving 0), bit-reproducibly."""
    x = np.asarray(values, dtype=np.float64)
    if x.size and not bool(np.all(x <= 0.0)):
        raise ValueError("detexp is defined here for values <= 0 only")
    tiny = x < _UNDERFLOW
    safe = np.where(tiny, 0.0, x)
    k = np.rint(np.multiply(safe, INV_LN2))
    r = np.subtract(safe, np.multiply(k, LN2_HI))
    r = np.subtract(r, np.multiply(k, LN2_LO))
    r = np.multiply(r, 0.0625)  # exact: a power of two
    poly = np.full_like(r, _TAYLOR[0])
    for coefficient in _TAYLOR[1:]:
        poly = np.multiply(poly, r)
        poly = np.add(poly, coefficient)
    for _ in range(4):
        poly = np.multiply(poly, poly)
    out = np.ldexp(poly, k.astype(np.int64))
    out[tiny] = 0.0
    return out


def detsum(values: FloatArray) -> float:
    """The sum of ``values`` in a fixed pairwise order (independent of SIMD width)."""
    x = np.asarray(values, dtype=np.float64).reshape(-1)
    size = 1
    while size < x.shape[0]:
        size *= 2
    if size != x.shape[0]:
        x = np.concatenate((x, np.zeros(size - x.shape[0])))
    while x.shape[0] > 1:
        half = x.shape[0] // 2
        x = np.add(x[:half], x[half:])
    return float(x[0]) if x.shape[0] else 0.0


def detexp1(value: float) -> float:
    """``detexp`` of one float, in plain Python: the same operations, so the same bits."""
    if not value <= 0.0:
        raise ValueError("detexp is defined here for values <= 0 only")
    if value < _UNDERFLOW:
        return 0.0
    k = float(round(value * INV_LN2))  # round-half-even, like np.rint
    r = (value - k * LN2_HI) - k * LN2_LO
    r = r * 0.0625
    poly = _TAYLOR[0]
    for coefficient in _TAYLOR[1:]:
        poly = poly * r + coefficient
    for _ in range(4):
        poly = poly * poly
    return math.ldexp(poly, int(k))


def detsum_small(values: list[float]) -> float:
    """``detsum`` of a short list of floats, in plain Python, in the same pairwise order."""
    size = 1
    while size < len(values):
        size *= 2
    x = values + [0.0] * (size - len(values))
    while len(x) > 1:
        half = len(x) // 2
        x = [a + b for a, b in zip(x[:half], x[half:], strict=False)]
    return x[0] if x else 0.0
