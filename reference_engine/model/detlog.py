"""A natural logarithm that gives the same float64 bits on every machine.

``numpy.log`` dispatches at run time to SIMD kernels (AVX-512, AVX2, scalar libm) that are not
correctly rounded and do not agree in the last bit, so the same model would report different
logprobs on a laptop and in CI. This implementation uses only operations IEEE 754 defines exactly
(``frexp``, scaling by powers of two, ``+ - * /``, each in its own NumPy call so nothing can be
fused) plus a table built with ``decimal``, which is correctly rounded by specification.

Method: ``x = m * 2**e`` with ``m`` in ``[0.5, 1)``; ``c`` is ``m`` truncated to ``TABLE_BITS``
bits, so ``log x = e*ln2 + log c + log1p(r)`` with ``r = (m - c) / c`` in ``[0, 2**-9)``, where a
degree-6 Taylor polynomial is accurate to ~1e-19. Results are within a few ulp of the true value.
It is used once per artifact load, over every probability the model can return, so query time
pays nothing for it.
"""

from __future__ import annotations

import decimal
import functools
import math

import numpy as np

TABLE_BITS = 10
LN2 = 0.6931471805599453  # correctly rounded ln(2)


@functools.lru_cache(maxsize=1)
def _tables() -> tuple[np.ndarray, np.ndarray]:
    """``c`` and ``log c`` for every ``TABLE_BITS``-bit mantissa prefix (index = c * 2**bits)."""
    size = 1 << TABLE_BITS
    context = decimal.Context(prec=40)
    centres = np.zeros(size, dtype=np.float64)
    logs = np.zeros(size, dtype=np.float64)
    for index in range(size // 2, size):
        centres[index] = index / size  # exact: a small integer over a power of two
        exact = context.divide(decimal.Decimal(index), decimal.Decimal(size))
        logs[index] = float(context.ln(exact))
    centres.flags.writeable = False
    logs.flags.writeable = False
    return centres, logs


def detlog(values: np.ndarray) -> np.ndarray:
    """Natural log of strictly positive, finite float64 values, bit-reproducibly.

    Raises ValueError for zero, negative or non-finite input rather than returning -inf/nan.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.size and not (bool(np.all(x > 0.0)) and bool(np.all(np.isfinite(x)))):
        raise ValueError("detlog needs strictly positive finite values")
    centres, logs = _tables()
    mantissa, exponent = np.frexp(x)
    index = (mantissa * float(1 << TABLE_BITS)).astype(np.intp)
    centre = centres[index]
    r = (mantissa - centre) / centre
    poly = np.multiply(r, -1.0 / 6.0)
    poly = np.add(poly, 1.0 / 5.0)
    poly = np.multiply(poly, r)
    poly = np.add(poly, -1.0 / 4.0)
    poly = np.multiply(poly, r)
    poly = np.add(poly, 1.0 / 3.0)
    poly = np.multiply(poly, r)
    poly = np.add(poly, -1.0 / 2.0)
    poly = np.multiply(poly, r)
    poly = np.add(poly, 1.0)
    poly = np.multiply(poly, r)
    scaled = np.multiply(exponent.astype(np.float64), LN2)
    return np.add(scaled, np.add(logs[index], poly))


def detlog1(value: float) -> float:
    """``detlog`` of one float, in plain Python: the same operations, so the same bits.

    For scalars a NumPy call costs a microsecond of overhead each; Python floats are IEEE
    754 doubles with the same exactly rounded ``+ - * /``.
    """
    if not (value > 0.0 and math.isfinite(value)):
        raise ValueError("detlog needs strictly positive finite values")
    centres, logs = _tables()
    mantissa, exponent = math.frexp(value)
    index = int(mantissa * float(1 << TABLE_BITS))
    centre = float(centres[index])
    r = (mantissa - centre) / centre
    poly = r * (-1.0 / 6.0)
    poly = poly + 1.0 / 5.0
    poly = poly * r
    poly = poly + -1.0 / 4.0
    poly = poly * r
    poly = poly + 1.0 / 3.0
    poly = poly * r
    poly = poly + -1.0 / 2.0
    poly = poly * r
    poly = poly + 1.0
    poly = poly * r
    return float(exponent) * LN2 + (float(logs[index]) + poly)
