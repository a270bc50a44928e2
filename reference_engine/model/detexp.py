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
``detsum``: a pairwise sum by halving, in a fixed order; ``detsum_rows`` sums several rows at
once in the same order per row.

Cost: on the few hundred values of a typical call, NumPy's per-call overhead is the cost, so
``detexp`` works in place, takes its constants as 0-d arrays (a Python float operand is
converted on every call) and is called once for everything a step needs (``logprobs``).
"""

from __future__ import annotations

import math

import numpy as np

from ..arrays import FloatArray

INV_LN2 = 1.4426950408889634
LN2_HI = 6.93147180369123816490e-01  # 0x3fe62e42fee00000: trailing zeros, k * LN2_HI is exact
LN2_LO = 1.90821492927058770002e-10
_TAYLOR = tuple(1.0 / float(math.factorial(n)) for n in range(9, -1, -1))
_UNDERFLOW = -745.2  # exp(x) rounds to 0 below this


def _constant(value: float) -> FloatArray:
    # A 0-d array operand: NumPy converts a Python float on every call (~0.25 us); the
    # arithmetic is the same float64 operation either way.
    array = np.array(value, dtype=np.float64)
    array.flags.writeable = False
    return array


_C_INV_LN2 = _constant(INV_LN2)
_C_LN2_HI = _constant(LN2_HI)
_C_LN2_LO = _constant(LN2_LO)
_C_SIXTEENTH = _constant(0.0625)
_C_TAYLOR = tuple(_constant(c) for c in _TAYLOR)
_C_ZERO = _constant(0.0)


def detexp(values: FloatArray) -> FloatArray:
    """``exp`` of values <= 0 (``-inf`` allowed, giving 0), bit-reproducibly.

    Every step is one NumPy call writing into a buffer of its own: on the few hundred values
    of a typical call the per-call overhead, not the arithmetic, is the cost. The operations
    and their order are those of ``detexp1``, so the bits are too.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        return np.zeros(x.shape)
    flat = x.reshape(-1)
    if not flat[flat.argmax()] <= 0.0:  # the max (argmax is the cheaper reduction); NaN fails
        raise ValueError("detexp is defined here for values <= 0 only")
    tiny = np.less(x, _UNDERFLOW)
    any_tiny = bool(np.count_nonzero(tiny))
    safe = np.where(tiny, _C_ZERO, x) if any_tiny else x
    k = np.multiply(safe, _C_INV_LN2)
    np.rint(k, k)
    r = np.multiply(k, _C_LN2_HI)
    np.subtract(safe, r, r)
    poly = np.multiply(k, _C_LN2_LO)
    np.subtract(r, poly, r)
    np.multiply(r, _C_SIXTEENTH, r)  # exact: a power of two
    # Horner: c9 * r + c8, * r + c7, ...; c9 * r is the first product (c9 times the array
    # of c9's times r, as the scalar code computes it, is the same correctly rounded product).
    np.multiply(r, _C_TAYLOR[0], poly)
    for coefficient in _C_TAYLOR[1:-1]:
        np.add(poly, coefficient, poly)
        np.multiply(poly, r, poly)
    np.add(poly, _C_TAYLOR[-1], poly)
    for _ in range(4):
        np.multiply(poly, poly, poly)
    np.ldexp(poly, k.astype(np.int64), poly)
    if any_tiny:
        poly[tiny] = 0.0
    return poly


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


def detsum_rows(values: FloatArray) -> FloatArray:
    """``detsum`` of each row of a 2-D array (one NumPy call per halving for all rows).

    Each row is zero-padded to a power of two and halved (``x[:h] + x[h:]``) until one value
    is left: the same pairs, so the same bits, as ``detsum`` of the row alone. The rows are
    laid out as columns, so every halving adds two contiguous blocks.
    """
    rows, n = values.shape
    size = 1
    while size < n:
        size *= 2
    x = np.zeros((size, rows))
    x[:n] = values.T
    while size > 1:
        size //= 2
        x = np.add(x[:size], x[size:])
    return x[0]


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
