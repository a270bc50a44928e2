"""Reported log-probabilities: normalisation, the top-k listing and the JSON-safe value.

What the API reports as ``logprobs`` is the output of ``process_logits``: the log-softmax of
the logits after every logit-modifying processor and before temperature and truncation
(greedy picks its argmax). Banned tokens are -inf there; JSON has no -inf, so
``finite_logprob`` clamps every value to at least -9999.0 (vLLM's convention), which also
maps -inf to -9999.0.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ..model.detexp import detexp, detexp1, detsum, detsum_small
from ..model.detlog import detlog, detlog1
from .errors import NoAllowedTokenError

FloatArray = npt.NDArray[np.float64]
IdArray = npt.NDArray[np.int64]
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
    top = logits.max()
    if not top > -np.inf:
        raise NoAllowedTokenError("every token was banned by the logit processors")
    if base is not None:
        changed = np.flatnonzero(logits != base)
        if changed.shape[0] <= _SPARSE_LIMIT:
            return _sparse_log_softmax(logits, base, changed)
    shifted = np.subtract(logits, top)
    normaliser = detlog(np.array([detsum(detexp(shifted))]))[0]
    return np.subtract(shifted, normaliser)


_SPARSE_LIMIT = 1024  # past this, exponentiating everything is as cheap
_SCALAR_LIMIT = 12


def _sparse_log_softmax(logits: FloatArray, base: FloatArray, changed: IdArray) -> FloatArray:
    if changed.shape[0] <= _SCALAR_LIMIT:  # NumPy's per-call overhead dominates tiny arrays
        values = logits[changed].tolist()
        shift = max(0.0, max(values)) if values else 0.0
        rest = max(0.0, 1.0 - detsum_small([detexp1(v) for v in base[changed].tolist()]))
        mass = rest * detexp1(-shift) + detsum_small([detexp1(v - shift) for v in values])
        return np.subtract(logits, shift + detlog1(mass))
    array = logits[changed]
    shift = max(0.0, float(array.max()))
    rest = max(0.0, 1.0 - detsum(detexp(base[changed])))
    mass = rest * detexp1(-shift) + detsum(detexp(np.subtract(array, shift)))
    return np.subtract(logits, shift + detlog1(mass))


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
        values = np.array(processed_logprobs, dtype=np.float64, copy=True)
        result: list[tuple[int, float]] = []
        while len(result) < k:
            best = int(np.argmax(values))  # first maximum: the lowest id among ties
            if values[best] == -np.inf:  # only -inf left: the lowest such ids, in order
                rest = np.flatnonzero(processed_logprobs == -np.inf)[: k - len(result)]
                result.extend((int(i), -np.inf) for i in rest)
                break
            result.append((best, float(values[best])))
            values[best] = -np.inf
        return result
    if k == n:
        candidates = np.arange(n)
    else:
        kth = np.partition(processed_logprobs, n - k)[n - k]
        candidates = np.flatnonzero(processed_logprobs >= kth)
    values = processed_logprobs[candidates]
    order = np.lexsort((candidates, -values))[:k]
    return [(int(candidates[i]), float(values[i])) for i in order]
