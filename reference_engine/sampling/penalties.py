"""Repetition penalties: FriendliAI/HF ``repetition_penalty`` and OpenAI presence/frequency.

Two different families with different scopes, on purpose:

* ``repetition_penalty`` (CTRL, Keskar et al. 2019; HF ``RepetitionPenaltyLogitsProcessor``):
  multiplicative, applied once to every token that occurs anywhere in prompt + generated
  text: a logit < 0 is multiplied by the penalty, a logit > 0 divided by it (so a penalty
  > 1 always makes the token less likely). The reference model's logits are its
  log-probabilities, which are <= 0, so unless ``logit_bias`` pushed a token above 0 the
  penalty scales its log-probability (x1.3 turns -2.0 into -2.6).
* ``presence_penalty`` / ``frequency_penalty`` (OpenAI): additive,
  ``logit[j] -= count_j * frequency_penalty + (count_j > 0) * presence_penalty``, where
  ``count_j`` counts token j in the GENERATED tokens of this choice only (not the prompt),
  as in OpenAI's documentation and vLLM's implementation.

-inf stays -inf under both (-inf * p, -inf / p and -inf - c are all -inf). ``pipeline.py``
applies both (this module holds the in-place repetition step it shares); the plainly written
oracles the tests compare them with live in ``tests/reference_engine/sampling/``.
"""

from __future__ import annotations

import numpy as np

from ..arrays import FloatArray, IdArray

PENALISED_LIMIT = 1e9


def penalise_repeated(logits: FloatArray, ids: IdArray, penalty: float) -> None:
    """Apply ``repetition_penalty`` in place to ``logits[ids]`` (``ids`` unique)."""
    if not ids.shape[0]:
        return
    values = logits[ids]
    highest = values[values.argmax()]
    lowest = float(values[values.argmin()])  # a Python float: its product cannot warn
    if highest <= 0.0 and lowest * penalty > -PENALISED_LIMIT:
        # The usual case: every value finite and <= 0, and none can pass the limit, so
        # ``x * p`` everywhere with nothing to saturate or warn about (NaN and -inf fail the
        # test). The same products as below, without ``np.errstate`` and the finiteness
        # passes, which cost more than the product on a few hundred values.
        logits[ids] = np.multiply(values, penalty, out=values)
        return
    finite = np.isfinite(values)
    # An extreme penalty (the contract sets no upper bound) can overflow to -inf / +inf; the
    # result saturates at +-PENALISED_LIMIT instead, which keeps the order and, like -inf,
    # leaves the token no probability (exp underflows) without an overflow warning or NaN.
    # Banned tokens (-inf) stay banned.
    with np.errstate(over="ignore"):
        if highest <= 0.0:  # x * p everywhere (0 * p == 0 / p)
            np.multiply(values, penalty, out=values)
        else:
            values = np.where(values < 0.0, values * penalty, values / penalty)
    if not finite.all() or not np.isfinite(values).all():  # rare: keep bans, saturate overflows
        # Only the values that overflowed: a finite result past the limit stays as it is, as
        # it does when nothing overflows and nothing is banned (the oracle's rule).
        overflowed = finite & ~np.isfinite(values)
        values = np.where(overflowed, np.copysign(PENALISED_LIMIT, values), values)
    logits[ids] = values
