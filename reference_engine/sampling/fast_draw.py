"""The sampler's draw without the dense distribution, giving exactly ``sample``'s token.

``sample`` (no truncation) maps ``u = rng.random()`` to a token by an inverse CDF over
``exp(logprobs / temperature - max)`` in ascending id order, summed in floats (``_draw``). Over
a model context (``model.sparse``) the same CDF is, up to rounding,

    CDF(w) = g * B(w) + D(w)

with ``B`` the cumulative base weights ``exp((log_base - max log_base) / temperature)`` (one
table per temperature, shared by every context), ``g`` the context's scale of them and ``D``
the cumulative correction of its few followers (their own weight minus ``g`` times their base
weight). A bisection over the followers' intervals, then over ``B`` in the gap between two
followers, finds the token in O(followers + log vocabulary), without exponentiating 4,096
values per token.

Exactness: both CDFs are within ~1e-12 of the real-number CDF (``vocab * few ulp``, all
weights at most 1 and the total at least 1), so whenever ``u * total`` lies more than
``MARGIN`` (1e-8 of the total: 10,000 times that bound) inside a token's interval here,
``sample`` picks the same token. Otherwise ``draw`` returns None and the caller runs
``sample`` itself with the same ``u``: that happens for about ``2 * MARGIN`` per boundary near
``u``, i.e. almost never. The result is ``sample``'s token for every ``u``, on every machine;
tests compare the two over random requests.
"""

from __future__ import annotations

import bisect
import functools
import math

import numpy as np
import numpy.typing as npt

from ..model.sparse import SparseLogprobs, SparseTables
from .params import SamplingParams
from .sampler import RandomSource, TokenFilter, sample

FloatArray = npt.NDArray[np.float64]
IdArray = npt.NDArray[np.int64]
MARGIN = 1e-8
_TEMPERATURES = 8  # per-temperature tables kept per context and per model


class BaseWeights:
    """``exp((log_base - max) / temperature)`` and its running sums (exclusive and inclusive).

    Accuracy, not bits, matters here (``draw`` only trusts a token far from any boundary), so
    NumPy's exp and cumsum are fine.
    """

    def __init__(self, log_base: FloatArray, temperature: float) -> None:
        self.top = float(log_base.max())
        weights = np.exp(np.divide(np.subtract(log_base, self.top), temperature))
        self.weights = weights
        self.inclusive = np.cumsum(weights)
        self.exclusive = np.concatenate(([0.0], self.inclusive[:-1]))
        self.inclusive_list: list[float] = self.inclusive.tolist()
        self.total = float(self.inclusive[-1])


@functools.lru_cache(maxsize=_TEMPERATURES)
def base_weights(tables: SparseTables, temperature: float) -> BaseWeights:
    """The shared base table of one model and temperature."""
    return BaseWeights(tables.log_base, temperature)


class ContextCdf:
    """One context's CDF at one temperature: the followers' intervals and the gaps' offsets."""

    __slots__ = ("base", "dc", "followers", "g", "post", "pre", "total")

    def __init__(self, sparse: SparseLogprobs, temperature: float) -> None:
        base = base_weights(sparse.tables, temperature)
        values = sparse.values
        top = sparse.top(1)[0][1]
        self.base = base
        self.followers = sparse.follower_list
        g = math.exp((base.top + sparse.shift - top) / temperature)
        self.g = g
        if values.shape[0]:
            ids = sparse.followers
            weights = np.exp(np.divide(np.subtract(values, top), temperature))
            dc = np.cumsum(np.subtract(weights, np.multiply(base.weights[ids], g)))
            pre = np.multiply(base.exclusive[ids], g)
            pre[1:] += dc[:-1]
            post = np.add(np.multiply(base.inclusive[ids], g), dc)
            self.dc = [0.0, *dc.tolist()]
            self.pre: list[float] = pre.tolist()
            self.post: list[float] = post.tolist()
        else:
            self.dc, self.pre, self.post = [0.0], [], []
        self.total = g * base.total + self.dc[-1]

    def token(self, u: float) -> int | None:
        """The token ``sample`` draws for ``u``, or None when ``u`` is too close to a boundary
        (or the tables are degenerate) to be sure."""
        total = self.total
        if not total > 0.5 or not math.isfinite(total):  # at least the top weight, ~1
            return None
        target = u * total
        margin = MARGIN * total
        followers = self.followers
        index = bisect.bisect_right(self.post, target)
        if index < len(followers) and target >= self.pre[index]:
            token, lower, upper = followers[index], self.pre[index], self.post[index]
        else:
            g = self.g
            if not g > 0.0:
                return None
            offset = self.dc[index]
            cumulative = self.base.inclusive_list
            token = bisect.bisect_right(cumulative, (target - offset) / g)
            if token >= len(cumulative):
                return None
            if (index and token <= followers[index - 1]) or (
                index < len(followers) and token >= followers[index]
            ):
                return None
            lower = g * (cumulative[token - 1] if token else 0.0) + offset
            upper = g * cumulative[token] + offset
        if target - lower < margin or upper - target < margin:
            return None
        return token


def context_cdf(sparse: SparseLogprobs, temperature: float) -> ContextCdf:
    """The context's CDF at ``temperature``, built once and kept in the view's memo."""
    key = ("cdf", temperature)
    found = sparse.memo.get(key)
    if found is None:
        if len(sparse.memo) > 2 * _TEMPERATURES:
            sparse.memo.clear()
        found = sparse.memo[key] = ContextCdf(sparse, temperature)
    return found  # type: ignore[return-value]


def draw(sparse: SparseLogprobs, temperature: float, u: float) -> int | None:
    """``sample``'s token for ``u`` at ``temperature`` without truncation, or None (then run
    ``sample`` with the same ``u``); see the module docstring."""
    return context_cdf(sparse, temperature).token(u)


class _Replay:
    """A random source that first returns a number already drawn, then the real source's."""

    __slots__ = ("_first", "_rng")

    def __init__(self, first: float, rng: RandomSource) -> None:
        self._first: float | None = first
        self._rng = rng

    def random(self) -> float:
        first = self._first
        if first is None:
            return self._rng.random()
        self._first = None
        return first


def sparse_path(params: SamplingParams) -> bool:
    """Whether ``sample_sparse`` serves ``params``: greedy, or sampling without truncation."""
    return params.greedy or not params.truncates


def sample_sparse(
    view: SparseLogprobs,
    params: SamplingParams,
    rng: RandomSource,
    *,
    allowed: TokenFilter | None = None,
    order: IdArray | None = None,
) -> int:
    """``sample(view.dense(), params, rng, allowed=allowed, order=order)`` for the params
    ``sparse_path`` accepts: the same token and the same ``rng`` calls, mostly without the
    dense array (it is used when the token filter rejects the pick or ``draw`` cannot be
    sure)."""
    if params.greedy:
        token = view.top(1)[0][0]
        if allowed is None or allowed(token):
            return token
        return sample(view.dense(), params, rng, allowed=allowed, order=order)
    u = rng.random()
    token_or_none = draw(view, params.temperature, u)
    if token_or_none is not None and (allowed is None or allowed(token_or_none)):
        return token_or_none
    return sample(view.dense(), params, _Replay(u, rng), allowed=allowed, order=order)
