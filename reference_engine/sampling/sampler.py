"""Pick one token from the processed distribution: temperature, truncation, one seeded draw.

Order (documented contract):

1. temperature: 0 (or below 1e-5: ``SamplingParams.greedy``) is greedy
   (argmax of the processed logprobs, ties by the lowest id; no
   truncation, no XTC and no random draw, since none of them can change a deterministic
   pick except XTC, which exists to add variety); otherwise the logprobs are divided by it;
2. top_k, 3. top_p, 4. min_p, 5. XTC (see ``truncation``), each on the survivors of the
   previous one; XTC first flips its coin with ``rng.random() < xtc_probability``;
6. one inverse-CDF draw: ``u = rng.random()`` over the weights ``exp(scaled - max)`` of the
   kept tokens in ascending id order, in two levels (``_draw``): blocks of 64 weights are
   summed, ``u * total`` picks a block through the blocks' cumulative sum, then a token
   inside the block through the block's own cumulative sum. A sequential ``np.cumsum`` over
   4,096 weights costs ~15 us (each add waits for the previous one); the two levels cost a
   fifth of that and are just as deterministic (fixed summation order). Draws are
   reproducible for a seed on a given platform; across
   platforms ``exp`` may differ in the last ulp, which can only matter when ``u`` falls
   within a few ulps of a boundary.

Speed without changing results (tests compare every shortcut with the plain algorithm): with
top_k, only a head of the distribution holding the k most likely tokens and everything that
could tie with the k-th gets weights (``_top_k_candidates``), and top-k and top-p share one
sort of it; top-p over the whole vocabulary sorts every weight once with ``np.sort`` (sorted
values are the same floats whatever the algorithm, and NumPy's vectorised sort beats both a
head search and a run-merging sort along the model's base order: ~10 us against ~21 us for
4,096 weights); the max is taken with ``argmax`` and masks are turned into positions once
(NumPy's reductions and boolean indexing cost a microsecond or more each, even on small
arrays).

Lazy token filter (``allowed``, e.g. the json_object grammar): the drawn token is checked;
if it is rejected, the candidates are masked in bulk (``allowed.mask``) and the draw is
redone among the valid ones, reusing the first uniform rescaled within the rejected token's
interval (uniform again, so no extra ``random()`` call). The result is exactly a draw from the
truncated distribution restricted to valid tokens and renormalised:
``P(x) = t(x) + (1 - Z) t(x) / Z = t(x) / Z`` for valid x, with t the truncated distribution
and Z its valid mass. If truncation left no valid token, the redraw uses every valid token
of the temperature-scaled distribution (truncation yields to the constraint); if there is
none at all, ``NoAllowedTokenError``.
"""

from __future__ import annotations

import functools
import math
from typing import Protocol

import numpy as np

from ..arrays import BoolArray, FloatArray, IdArray
from .errors import NoAllowedTokenError
from .params import SamplingParams
from .truncation import (
    min_p_filter,
    top_k_filter,
    top_k_top_p_filter,
    top_p_filter,
    xtc_filter,
)

_BELOW_ONE = math.nextafter(1.0, 0.0)


class TokenFilter(Protocol):
    """A lazy validity test: per token (cheap, asked first) and in bulk (the fallback)."""

    def __call__(self, token_id: int) -> bool: ...

    def mask(self, token_ids: IdArray) -> BoolArray: ...


class RandomSource(Protocol):
    def random(self) -> float: ...


def greedy(processed_logprobs: FloatArray, *, allowed: TokenFilter | None = None) -> int:
    """The argmax, ties by the lowest id; with ``allowed``, the best valid token."""
    _check(processed_logprobs)
    token = int(processed_logprobs.argmax())
    if not processed_logprobs[token] > -np.inf:
        raise NoAllowedTokenError("every token has logprob -inf")
    if allowed is None or allowed(token):
        return token
    candidates = np.flatnonzero(processed_logprobs > -np.inf)
    valid = candidates[allowed.mask(candidates)]
    if valid.shape[0] == 0:
        raise NoAllowedTokenError("no token with a finite logprob passes the token filter")
    return int(valid[np.argmax(processed_logprobs[valid])])


def sample(
    processed_logprobs: FloatArray,
    params: SamplingParams,
    rng: RandomSource,
    *,
    allowed: TokenFilter | None = None,
) -> int:
    """Draw one token id from ``process_logits``' output under ``params`` (see module doc)."""
    if params.greedy:
        return greedy(processed_logprobs, allowed=allowed)
    if params.scale_can_overflow:  # rare: a huge repetition_penalty; checked once per token
        with np.errstate(over="ignore", invalid="ignore"):
            top_logprob = float(processed_logprobs.max())
            scaled_top = top_logprob / params.temperature
            if not -np.inf < scaled_top < np.inf:
                # The most likely token's own scaled logprob overflowed: at that scale every
                # other token's weight is 0 against it, so the draw is the argmax.
                return greedy(processed_logprobs, allowed=allowed)
            return _sample(processed_logprobs, params, rng, allowed)
    return _sample(processed_logprobs, params, rng, allowed)


def _sample(
    processed_logprobs: FloatArray,
    params: SamplingParams,
    rng: RandomSource,
    allowed: TokenFilter | None,
) -> int:
    _check(processed_logprobs)
    temperature = params.temperature
    top_logprob = float(processed_logprobs[processed_logprobs.argmax()])  # the max
    if not top_logprob > -np.inf:
        raise NoAllowedTokenError("every token has logprob -inf")
    # == max(processed / temperature): division by a positive number is monotone
    top = top_logprob if temperature == 1.0 else top_logprob / temperature
    ids: IdArray | None = None
    if not params.truncates:
        kept = _weights(processed_logprobs, temperature, top)
    else:
        top_k = params.top_k
        candidates = None
        if 0 < top_k < processed_logprobs.shape[0]:
            candidates = _top_k_candidates(processed_logprobs, top_k, temperature, top_logprob)
        descending = None
        if candidates is not None:
            ids = candidates
            probs = _weights(processed_logprobs[candidates], temperature, top)
            positive = probs > 0.0
            if np.count_nonzero(positive) != positive.shape[0]:
                ids, probs = ids[positive], probs[positive]
        else:
            probs = _weights(processed_logprobs, temperature, top)
            if np.count_nonzero(probs) == probs.shape[0]:  # none underflowed (the usual case)
                ids = _every_id(probs.shape[0])
            else:
                ids = probs.nonzero()[0]
            if params.top_p < 1.0 and not 0 < top_k < ids.shape[0]:
                descending = _descending(probs, ids.shape[0])
            if ids.shape[0] != probs.shape[0]:
                probs = probs[ids]
        ids, kept = _truncate(ids, probs, params, rng, descending)
    position, inner = _draw(kept, rng.random())
    token = position if ids is None else int(ids[position])
    if allowed is None or allowed(token):
        return token
    return _redraw(processed_logprobs, temperature, ids, kept, inner, allowed)


@functools.lru_cache(maxsize=8)
def _every_id(size: int) -> IdArray:
    """``arange(size)``, read-only and built once (a ``nonzero`` over 4,096 weights costs
    several microseconds a step; the filters recognise it as every id, ``_select``)."""
    ids = np.arange(size)
    ids.flags.writeable = False
    return ids


def _weights(values: FloatArray, temperature: float, top: float) -> FloatArray:
    """``exp(values / temperature - top)``, elementwise (the sampler's unnormalised weights)."""
    scaled = values if temperature == 1.0 else np.divide(values, temperature)
    return np.exp(np.subtract(scaled, top))


def _check(processed_logprobs: FloatArray) -> None:
    if processed_logprobs.ndim != 1 or processed_logprobs.shape[0] == 0:
        raise ValueError(
            f"processed_logprobs must be a non-empty 1-D array, got shape "
            f"{processed_logprobs.shape}"
        )


_CANDIDATE_WIDTHS = (8.0, 16.0, 32.0, 64.0)  # heads tried (logprob below the max)
_CANDIDATE_TARGET = 4  # narrow the head down to at most this many times k candidates...
_CANDIDATE_STEPS = 8  # ...with at most this many bisection steps


def _top_k_candidates(
    logprobs: FloatArray, k: int, temperature: float, top: float
) -> IdArray | None:
    """Ascending ids of a head of ``logprobs`` holding the ``k`` most likely tokens and every
    token that could tie with the k-th after temperature and ``exp``; None if none is found.

    top_k only needs the head of the distribution, and only the head's weights. A threshold
    ``t`` with at least k logprobs >= t is found by widening ``max - width`` and then bisecting
    the width (counts only: a partition or sort of a few thousand values costs tens of us
    here). The k-th largest logprob is then >= t, and the candidates are every id
    with a logprob >= ``t - margin``, a margin of 1e-9 relative to the values (far more than
    the few ulp temperature and ``exp`` can blur), so every other id has a weight strictly
    below the k-th largest: ``top_k_filter`` over the candidates keeps exactly what it keeps
    over the whole vocabulary, and the candidates' weights are computed elementwise exactly as
    over the whole array (``np.exp`` is elementwise; were it to round differently on a shorter
    array somewhere, a draw could change only within a few ulp of a boundary, as between
    platforms). ``top`` is ``logprobs.max()``.
    """
    low = 0.0  # fewer than k logprobs are >= top - low
    for width in _CANDIDATE_WIDTHS:
        count = int(np.count_nonzero(logprobs >= top - width))
        if count >= k:
            break
        low = width
    else:
        return None
    if width / temperature > 700.0:
        return None  # weights near exp's underflow: ties at 0 are possible, sort them all
    high = width  # at least k logprobs are >= top - high
    if count > _CANDIDATE_TARGET * k:
        for _ in range(_CANDIDATE_STEPS):
            middle = 0.5 * (low + high)
            count = int(np.count_nonzero(logprobs >= top - middle))
            if count < k:
                low = middle
                continue
            high = middle
            if count <= _CANDIDATE_TARGET * k:
                break
    threshold = top - high
    margin = 1e-9 * (1.0 + abs(threshold) + abs(top))
    return (logprobs >= threshold - margin).nonzero()[0]


def _descending(probs: FloatArray, positive: int) -> FloatArray:
    """``probs``' ``positive`` values above 0 in descending order (the others are 0)."""
    return np.sort(probs)[probs.shape[0] - positive :][::-1]


def _truncate(
    ids: IdArray,
    probs: FloatArray,
    params: SamplingParams,
    rng: RandomSource,
    descending: FloatArray | None = None,
) -> tuple[IdArray, FloatArray]:
    if descending is None and 0 < params.top_k < probs.shape[0] and params.top_p < 1.0:
        ids, probs = top_k_top_p_filter(ids, probs, params.top_k, params.top_p)
    else:
        ids, probs = top_k_filter(ids, probs, params.top_k)
        ids, probs = top_p_filter(ids, probs, params.top_p, descending=descending)
    ids, probs = min_p_filter(ids, probs, params.min_p)
    if params.xtc_active and rng.random() < params.xtc_probability:
        ids, probs = xtc_filter(ids, probs, params.xtc_threshold)
    return ids, probs


_BLOCK = 64


def _draw(weights: FloatArray, u: float) -> tuple[int, float]:
    """Inverse CDF over ``weights`` (> 0 somewhere): the position ``u`` selects, and ``u``
    rescaled inside that position's interval (for the lazy filter's redraw)."""
    n = weights.shape[0]
    if n <= 4 * _BLOCK:
        return _draw_cumulative(weights.cumsum(), u)
    pad = (-n) % _BLOCK
    padded = weights if pad == 0 else np.concatenate((weights, np.zeros(pad)))
    block_cumulative = padded.reshape(-1, _BLOCK).sum(axis=1).cumsum()
    block, inner = _draw_cumulative(block_cumulative, u)
    start = block * _BLOCK
    position, inner = _draw_cumulative(padded[start : start + _BLOCK].cumsum(), inner)
    return min(start + position, n - 1), inner


def _draw_cumulative(cumulative: FloatArray, u: float) -> tuple[int, float]:
    total = cumulative[-1]
    target = u * total
    position = int(cumulative.searchsorted(target, side="right"))
    if position >= cumulative.shape[0]:  # u * total rounded up to total
        position = int(cumulative.searchsorted(total, side="left"))
    low = cumulative[position - 1] if position else 0.0
    width = cumulative[position] - low
    if not width > 0.0:  # a zero-weight slot reached through rounding: take the next weight
        position = int(cumulative.searchsorted(low, side="right"))
        width = cumulative[position] - low
    inner = float((target - low) / width) if width > 0.0 else 0.0
    return position, min(max(inner, 0.0), _BELOW_ONE)


def _redraw(
    processed: FloatArray,
    temperature: float,
    ids: IdArray | None,
    kept: FloatArray,
    u: float,
    allowed: TokenFilter,
) -> int:
    if ids is None:
        ids = np.flatnonzero(kept > 0.0)
        kept = kept[ids]
    valid = allowed.mask(ids)
    if valid.any():
        ids, kept = ids[valid], kept[valid]
    else:  # truncation kept no valid token: fall back to every valid finite token
        scaled = processed if temperature == 1.0 else processed / temperature
        ids = np.flatnonzero(scaled > -np.inf)
        ids = ids[allowed.mask(ids)]
        if ids.shape[0] == 0:
            raise NoAllowedTokenError("no token with a finite logprob passes the token filter")
        values = scaled[ids]
        kept = np.exp(values - values.max())
    position, _ = _draw(kept, u)
    return int(ids[position])
