"""Reported log-probabilities: normalisation, the top-k listing and the JSON-safe value.

What the API reports as ``logprobs`` is the output of ``process_logits``: the log-softmax of
the logits after every logit-modifying processor and before temperature and truncation
(greedy picks its argmax). Banned tokens are -inf there; JSON has no -inf, so
``finite_logprob`` clamps every value to at least -9999.0 (vLLM's convention), which also
maps -inf to -9999.0.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from ..arrays import FloatArray, IdArray
from ..model.detexp import detexp, detexp1, detsum, detsum_rows, detsum_small
from ..model.detlog import detlog1
from .errors import NoAllowedTokenError

LOGPROB_FLOOR = -9999.0
_ITERATIVE_TOP_K = 8


def log_softmax(logits: FloatArray, *, base: FloatArray | None = None) -> FloatArray:
    """``logits - logsumexp(logits)``; -inf stays -inf. NoAllowedTokenError if all are -inf.

    Bit-reproducible on every machine (``detexp``, ``detsum``, ``detlog``: the values are
    reported). ``base``, when given, is a normalised log-distribution that ``logits`` was
    derived from by changing a few entries (the model's logprobs, before the processors):
    then only the changed entries are exponentiated, since the unchanged ones still hold
    their base mass, ``1 - sum(exp(base[changed]))``.
    """
    top = logits[logits.argmax()]  # the max (argmax is the cheaper reduction)
    if not top > -np.inf:
        raise NoAllowedTokenError("every token was banned by the logit processors")
    if base is not None:
        changed = (logits != base).nonzero()[0]
        if changed.shape[0] <= _SPARSE_LIMIT:
            out = _sparse_log_softmax(logits, base, changed)
            if out is not None:
                return out
    shifted = np.subtract(logits, top)
    normaliser = detlog1(detsum(detexp(shifted)))  # detlog1 gives detlog's bits
    return np.subtract(shifted, normaliser, shifted)


def sparse_log_softmax(base: FloatArray, banned: IdArray) -> FloatArray:
    """``log_softmax(x, base=base)`` for ``x`` = ``base`` with ``banned`` (ascending, unique,
    fewer than ``_SPARSE_LIMIT``) set to -inf: the same bits, without comparing ``x`` with
    ``base`` to find what changed (a hot path of constrained decoding)."""
    x = base.astype(np.float64)  # a copy
    x[banned] = -np.inf
    top = x[x.argmax()]
    if not top > -np.inf:
        raise NoAllowedTokenError("every token was banned by the logit processors")
    changed = banned[base[banned] != -np.inf]  # == (x != base).nonzero()[0]
    out = _sparse_log_softmax(x, base, changed)
    return log_softmax(x) if out is None else out


_SPARSE_LIMIT = 1024  # past this, exponentiate everything (changing it changes output bits)
_SCALAR_LIMIT = 12
_MOST_OF_THE_MASS = 0.999
"""Past this base mass in the changed entries, exponentiate everything: the unchanged mass
``1 - sum(exp(base[changed]))`` is a difference of nearly equal numbers, whose rounding
(~1e-15 absolute, the sum's) is a relative error of ~1e-15 / rest (banning the likely
tokens left ~1e-6 of it, and the result summed to 1 + 1e-9). Up to here, rest >= 1e-3 keeps
that below ~1e-12; a lower bound (0.5 was tried) sent penalised requests, whose seen tokens
often hold most of the mass, to the dense path on most steps (-20% tokens/s)."""


@functools.lru_cache(maxsize=4096)
def _scalar_normaliser(values: tuple[float, ...], base_values: tuple[float, ...]
                       ) -> float | None:
    """What ``_sparse_log_softmax`` subtracts when a few entries changed from ``base_values`` to
    ``values``: a pure function of those floats, so remembered (a context's end-of-text
    logprob comes back whenever the context does, as under a grammar banning it); None when
    the changed entries held most of the mass (``_MOST_OF_THE_MASS``)."""
    shift = max(0.0, max(values)) if values else 0.0
    changed_mass = detsum_small([detexp1(v) for v in base_values])
    if changed_mass > _MOST_OF_THE_MASS:
        return None
    rest = max(0.0, 1.0 - changed_mass)
    mass = rest * detexp1(-shift) + detsum_small([detexp1(v - shift) for v in values])
    return shift + detlog1(mass)


def _sparse_log_softmax(logits: FloatArray, base: FloatArray, changed: IdArray
                        ) -> FloatArray | None:
    """``log_softmax(logits)`` from the ``changed`` entries alone, or None when they held
    most of the base mass (see ``_MOST_OF_THE_MASS``)."""
    if changed.shape[0] <= _SCALAR_LIMIT:  # NumPy's per-call overhead dominates tiny arrays
        normaliser = _scalar_normaliser(tuple(logits[changed].tolist()),
                                        tuple(base[changed].tolist()))
        return None if normaliser is None else np.subtract(logits, normaliser)
    # Both exponentials in one detexp call and both sums in one detsum_rows call (NumPy's
    # per-call overhead dominates a few hundred values): the same operations per value, and
    # the same pairwise order per sum, as two separate detexp + detsum calls.
    values = logits[changed]
    shift = max(0.0, float(values[values.argmax()]))
    pairs = np.empty((changed.shape[0], 2))
    pairs[:, 0] = base[changed]
    np.subtract(values, shift, out=pairs[:, 1])
    sums = detsum_rows(detexp(pairs).T)
    if float(sums[0]) > _MOST_OF_THE_MASS:
        return None
    rest = max(0.0, 1.0 - float(sums[0]))
    # detexp1(-0.0) is exactly 1.0: skip its polynomial in the usual case (no value above 0).
    mass = (rest if shift == 0.0 else rest * detexp1(-shift)) + float(sums[1])
    return np.subtract(logits, shift + detlog1(mass))


def banned_normaliser(base_values: Sequence[float]) -> float | None:
    """What ``log_softmax(x, base=base)`` subtracts from every entry when ``x`` is ``base``
    with a few entries set to -inf (``base_values``: theirs, in ascending id order), without
    the array: the same float, so ``base[t] - banned_normaliser(...)`` is ``x``'s
    re-normalised value at every other ``t``, bit for bit. None where ``log_softmax`` would
    exponentiate everything (many entries, or most of the mass banned)."""
    changed = [value for value in base_values if value != -np.inf]  # -inf stays unchanged
    if len(changed) > _SCALAR_LIMIT:
        return None
    return _scalar_normaliser((-np.inf,) * len(changed), tuple(changed))


def finite_logprob(value: float) -> float:
    """A logprob as a JSON-safe float: ``max(value, -9999.0)``, so -inf becomes -9999.0."""
    return max(float(value), LOGPROB_FLOOR)


def top_logprobs(processed_logprobs: FloatArray, k: int) -> list[tuple[int, float]]:
    """The ``k`` most likely ``(token_id, logprob)`` pairs, most likely first, ties by the
    lowest id. Values are raw (possibly -inf when fewer than k tokens are finite): pass them
    through ``finite_logprob`` for JSON."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise ValueError(f"top_logprobs k must be an integer >= 0, got {k!r}")
    n = processed_logprobs.shape[0]
    k = min(int(k), n)
    if k == 0:
        return []
    if k <= _ITERATIVE_TOP_K:  # k argmax passes beat a partition of the whole array
        values = processed_logprobs.astype(np.float64)  # a copy
        result: list[tuple[int, float]] = []
        for _ in range(k):
            best = int(values.argmax())  # first maximum: the lowest id among ties
            value = float(values[best])
            if value == -np.inf:  # only -inf left: the lowest such ids, in order
                rest = (processed_logprobs == -np.inf).nonzero()[0][: k - len(result)]
                result.extend((int(i), -np.inf) for i in rest)
                break
            result.append((best, value))
            values[best] = -np.inf
        return result
    if k == n:
        candidates = np.arange(n)
    else:
        kth = np.partition(processed_logprobs, n - k)[n - k]
        candidates = (processed_logprobs >= kth).nonzero()[0]
    values = processed_logprobs[candidates]
    order = np.lexsort((candidates, -values))[:k]
    return [(int(candidates[i]), float(values[i])) for i in order]
