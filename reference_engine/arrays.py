"""The NumPy array types the engine passes around, each named once for what it holds.

Type aliases only: they annotate, they never convert, so no array's dtype depends on them.
Each spells the exact dtype its arrays have, because the engine's results are defined bit for
bit (``model.detexp``): a float32 or an int32 slipping in would change them.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
"""Float64 values: logits, logprobs, weights, sums (over the vocabulary or a candidate set)."""

ProbArray = npt.NDArray[np.float64]
"""Probabilities of a candidate set, unnormalised and > 0 (what the truncation filters keep)."""

IdArray = npt.NDArray[np.int64]
"""Token ids as int64: prompts and histories, candidates, banned and penalised tokens."""

IndexArray = npt.NDArray[np.intp]
"""Positions as NumPy's index type (``np.intp``): the model tables' offsets and rows, and
their ``followers`` (token ids kept as intp because they index vocabulary-sized arrays)."""

BoolArray = npt.NDArray[np.bool_]
"""One flag per token: which tokens a grammar or the UTF-8 filter allows, which candidates a
truncation filter keeps."""
