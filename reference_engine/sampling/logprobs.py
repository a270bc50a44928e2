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

from .errors import NoAllowedTokenError

FloatArray = npt.NDArray[np.float64]
LOGPROB_FLOOR = -9999.0
_ITERATIVE_TOP_K = 8


def log_softmax(logits: FloatArray) -> FloatArray:
    """``logits - logsumexp(logits)``; -inf stays -inf. NoAllowedTokenError if all are -inf."""
    top = logits.max()
    if not top > -np.inf:
        raise NoAllowedTokenError("every token was banned by the logit processors")
    shifted = logits - top
    shifted -= np.log(np.sum(np.exp(shifted)))
    return shifted


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
