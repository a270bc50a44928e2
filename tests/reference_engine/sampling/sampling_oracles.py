"""Plainly written oracles of the engine's logit processors, one loop each.

The engine has one production version of every processor, fused and vectorised in
``reference_engine/sampling/pipeline.py`` (with its incremental state in ``context.py``). These
say the same thing the slow, obvious way, straight from the documented semantics, so the tests
can compare the two (``test_sampling_pipeline.py``) and state each processor's meaning on small
cases (``test_sampling_bias.py``, ``test_sampling_bans.py``, ``test_sampling_penalties.py``).
Each returns a new array; -inf stays -inf.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]
NEG_INF = -math.inf
PENALISED_LIMIT = 1e9
"""Where an overflowing repetition penalty saturates (as the engine does)."""


def _copy(logits: Sequence[float] | Floats) -> Floats:
    return np.array(logits, dtype=np.float64, copy=True)


def _ids(values: Sequence[int] | npt.NDArray[np.int64]) -> list[int]:
    return [int(value) for value in values]


def _check(name: str, ids: Sequence[int], vocab_size: int) -> None:
    for token in ids:
        if not 0 <= token < vocab_size:
            raise ValueError(
                f"{name} holds token id {token} outside the vocabulary (0..{vocab_size - 1})"
            )


def apply_logit_bias(logits: Floats, logit_bias: Mapping[int, float]) -> Floats:
    """OpenAI ``logit_bias``: add each bias to its token's logit."""
    out = _copy(logits)
    for token, bias in logit_bias.items():
        if not 0 <= token < out.shape[0]:
            raise ValueError(f"logit_bias token id {token} is outside the vocabulary "
                             f"(0..{out.shape[0] - 1})")
        out[token] += bias
    return out


def apply_bad_words(logits: Floats, *, bad_word_tokens: Sequence[Sequence[int]],
                    prompt_ids: Sequence[int], generated_ids: Sequence[int]) -> Floats:
    """FriendliAI ``bad_word_tokens``: a word of N tokens bans its last token when prompt +
    generated ends with its first N-1; a one-token word is always banned."""
    out = _copy(logits)
    history = _ids(prompt_ids) + _ids(generated_ids)
    banned = set()
    for word in (_ids(w) for w in bad_word_tokens):
        head = word[:-1]
        if not head or (len(head) <= len(history) and history[len(history) - len(head):] == head):
            banned.add(word[-1])
    _check("bad_word_tokens", sorted(banned), out.shape[0])
    for token in banned:
        out[token] = NEG_INF
    return out


def apply_no_repeat_ngram(logits: Floats, *, n: int, prompt_ids: Sequence[int],
                          generated_ids: Sequence[int]) -> Floats:
    """FriendliAI ``no_repeat_ngram``: no n-gram of prompt + generated occurs twice, so each
    earlier occurrence of the last n-1 tokens bans the token that followed it (1: off)."""
    out = _copy(logits)
    history = _ids(prompt_ids) + _ids(generated_ids)
    _check("prompt_ids + generated_ids", history, out.shape[0])
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"no_repeat_ngram must be an integer >= 1, got {n!r}")
    if n == 1 or len(history) < n:
        return out
    tail = history[len(history) - (n - 1):]
    for start in range(len(history) - n + 1):
        if history[start:start + n - 1] == tail:
            out[history[start + n - 1]] = NEG_INF
    return out


def apply_min_tokens(logits: Floats, *, min_tokens: int, num_generated: int,
                     eos_ids: Collection[int]) -> Floats:
    """``min_tokens``: the EOS ids are banned while fewer tokens were generated."""
    if min_tokens < 0 or num_generated < 0:
        raise ValueError(
            f"min_tokens and num_generated must be >= 0, got {min_tokens!r}, {num_generated!r}"
        )
    out = _copy(logits)
    if num_generated < min_tokens:
        _check("eos_ids", sorted(eos_ids), out.shape[0])
        for token in eos_ids:
            out[token] = NEG_INF
    return out


def apply_repetition_penalty(logits: Floats, *, penalty: float, prompt_ids: Sequence[int],
                             generated_ids: Sequence[int]) -> Floats:
    """HF/CTRL ``repetition_penalty``: once per token seen in prompt + generated, a negative
    logit is multiplied by the penalty and a positive one divided; an overflow saturates."""
    if not penalty > 0.0:
        raise ValueError(f"repetition_penalty must be > 0, got {penalty!r}")
    out = _copy(logits)
    _check("prompt_ids", _ids(prompt_ids), out.shape[0])
    _check("generated_ids", _ids(generated_ids), out.shape[0])
    for token in set(_ids(prompt_ids)) | set(_ids(generated_ids)):
        value = float(out[token])
        if not math.isfinite(value):
            continue
        changed = value * penalty if value < 0.0 else value / penalty
        out[token] = changed if math.isfinite(changed) else math.copysign(PENALISED_LIMIT,
                                                                           changed)
    return out


def apply_presence_frequency_penalty(logits: Floats, *, presence_penalty: float,
                                     frequency_penalty: float,
                                     generated_ids: Sequence[int]) -> Floats:
    """OpenAI: ``logit[j] -= count_j * frequency_penalty + presence_penalty`` for each token
    j the choice GENERATED (the prompt does not count)."""
    out = _copy(logits)
    generated = _ids(generated_ids)
    _check("generated_ids", generated, out.shape[0])
    for token in set(generated):
        out[token] -= generated.count(token) * frequency_penalty + presence_penalty
    return out


def apply_allowed_token_ids(logits: Floats, allowed_token_ids: Collection[int]) -> Floats:
    """vLLM ``allowed_token_ids``: every token not listed gets -inf; the listed keep theirs."""
    out = _copy(logits)
    allowed = set(_ids(list(allowed_token_ids)))
    _check("allowed_token_ids", sorted(allowed), out.shape[0])
    for token in range(out.shape[0]):
        if token not in allowed:
            out[token] = NEG_INF
    return out
