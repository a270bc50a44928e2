"""Pick one token from the processed distribution: temperature, truncation, one seeded draw.

Order (documented contract):

1. temperature: 0 is greedy (argmax of the processed logprobs, ties by the lowest id; no
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

import math
from typing import Protocol

import numpy as np
import numpy.typing as npt

from .errors import NoAllowedTokenError
from .params import SamplingParams
from .truncation import min_p_filter, top_k_filter, top_p_filter, xtc_filter

FloatArray = npt.NDArray[np.float64]
IdArray = npt.NDArray[np.int64]
_BELOW_ONE = math.nextafter(1.0, 0.0)


class TokenFilter(Protocol):
    """A lazy validity test: per token (cheap, asked first) and in bulk (the fallback)."""

    def __call__(self, token_id: int) -> bool: ...

    def mask(self, token_ids: IdArray) -> npt.NDArray[np.bool_]: ...


class RandomSource(Protocol):
    def random(self) -> float: ...


def greedy(processed_logprobs: FloatArray, *, allowed: TokenFilter | None = None) -> int:
    """The argmax, ties by the lowest id; with ``allowed``, the best valid token."""
    _check(processed_logprobs)
    token = int(np.argmax(processed_logprobs))
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
    if params.temperature == 0.0:
        return greedy(processed_logprobs, allowed=allowed)
    _check(processed_logprobs)
    scaled = processed_logprobs
    if params.temperature != 1.0:
        scaled = processed_logprobs / params.temperature
    top = scaled.max()
    if not top > -np.inf:
        raise NoAllowedTokenError("every token has logprob -inf")
    probs = np.exp(scaled - top)
    ids: IdArray | None = None
    kept = probs
    if params.truncates:
        ids = np.flatnonzero(probs > 0.0)
        ids, kept = _truncate(ids, probs[ids], params, rng)
    position, inner = _draw(kept, rng.random())
    token = position if ids is None else int(ids[position])
    if allowed is None or allowed(token):
        return token
    return _redraw(scaled, ids, kept, inner, allowed)


def _check(processed_logprobs: FloatArray) -> None:
    if processed_logprobs.ndim != 1 or processed_logprobs.shape[0] == 0:
        raise ValueError(
            f"processed_logprobs must be a non-empty 1-D array, got shape "
            f"{processed_logprobs.shape}"
        )


def _truncate(
    ids: IdArray, probs: FloatArray, params: SamplingParams, rng: RandomSource
) -> tuple[IdArray, FloatArray]:
    ids, probs = top_k_filter(ids, probs, params.top_k)
    ids, probs = top_p_filter(ids, probs, params.top_p)
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
        return _draw_cumulative(np.cumsum(weights), u)
    pad = (-n) % _BLOCK
    padded = weights if pad == 0 else np.concatenate((weights, np.zeros(pad)))
    block_cumulative = np.cumsum(padded.reshape(-1, _BLOCK).sum(axis=1))
    block, inner = _draw_cumulative(block_cumulative, u)
    start = block * _BLOCK
    position, inner = _draw_cumulative(np.cumsum(padded[start : start + _BLOCK]), inner)
    return min(start + position, n - 1), inner


def _draw_cumulative(cumulative: FloatArray, u: float) -> tuple[int, float]:
    total = cumulative[-1]
    target = u * total
    position = int(np.searchsorted(cumulative, target, side="right"))
    if position >= cumulative.shape[0]:  # u * total rounded up to total
        position = int(np.searchsorted(cumulative, total, side="left"))
    low = cumulative[position - 1] if position else 0.0
    width = cumulative[position] - low
    if not width > 0.0:  # a zero-weight slot reached through rounding: take the next weight
        position = int(np.searchsorted(cumulative, low, side="right"))
        width = cumulative[position] - low
    inner = float((target - low) / width) if width > 0.0 else 0.0
    return position, min(max(inner, 0.0), _BELOW_ONE)


def _redraw(
    scaled: FloatArray,
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
        ids = np.flatnonzero(scaled > -np.inf)
        ids = ids[allowed.mask(ids)]
        if ids.shape[0] == 0:
            raise NoAllowedTokenError("no token with a finite logprob passes the token filter")
        values = scaled[ids]
        kept = np.exp(values - values.max())
    position, _ = _draw(kept, u)
    return int(ids[position])
