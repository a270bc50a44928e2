"""vLLM's ``allowed_token_ids``: sample only among the listed tokens (a whitelist mask).

vLLM (``SamplingParams.allowed_token_ids``, https://docs.vllm.ai/en/latest/api/vllm/sampling_params.html):
"If provided, the engine will construct a logits processor which only retains scores for the
given token ids." Every other token's logit becomes -inf before anything else touches the
logits (vLLM's sampler applies the whitelist first, then bad words, ``logit_bias``,
``min_tokens`` and the penalties); none of those can lift a -inf, so the order changes
nothing but is kept the same. ``pipeline.process_logits`` runs it as its step 0.

An empty list is refused (vLLM: "allowed_token_ids is not None and empty!", ``params``), and so
is an id outside the vocabulary (vLLM: "allowed_token_ids contains out-of-vocab token id!",
checked where the vocabulary is known: the engine's plan and ``SamplingContext``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..arrays import FloatArray, IdArray

EMPTY_MESSAGE = "allowed_token_ids is not None and empty!"
OUT_OF_VOCAB_MESSAGE = "allowed_token_ids contains out-of-vocab token id!"


def allowed_id_array(allowed_token_ids: Sequence[int]) -> IdArray:
    """The whitelist as a read-only, ascending int64 array without duplicates."""
    ids = np.unique(np.asarray(allowed_token_ids, dtype=np.int64))
    ids.flags.writeable = False
    return ids


def keep_only(logits: FloatArray, allowed_ids: IdArray) -> FloatArray:
    """A new float64 array: ``logits`` at ``allowed_ids``, -inf everywhere else (the values
    kept are copied, not recomputed, so they are the same bits)."""
    out = np.full(logits.shape[0], -np.inf)
    out[allowed_ids] = logits[allowed_ids]
    return out
