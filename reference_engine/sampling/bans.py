"""Hard bans (logit set to -inf): FriendliAI ``bad_word_tokens``, ``no_repeat_ngram``,
``min_tokens``.

All three look at the token history and set some logits to -inf; none changes any other
logit. The history is prompt + generated (FriendliAI's ``no_repeat_ngram`` covers "the prompt
plus the output"; bad words are matched across the prompt/output boundary too, so a bad phrase
cannot be completed just because it started in the prompt). ``min_tokens`` bans the EOS ids
while fewer than ``min_tokens`` tokens were generated; stop *sequences* are the generation
loop's business, not this module's.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from functools import lru_cache

import numpy as np
import numpy.typing as npt

IdArray = npt.NDArray[np.int64]
NEG_INF = -np.inf


def history(prompt_ids: Sequence[int] | IdArray, generated_ids: Sequence[int] | IdArray) -> IdArray:
    """Prompt + generated ids as one int64 array."""
    return np.concatenate(
        (np.asarray(prompt_ids, dtype=np.int64), np.asarray(generated_ids, dtype=np.int64))
    )


def _check_ids(name: str, ids: IdArray, vocab_size: int) -> None:
    if ids.size and (ids.min() < 0 or ids.max() >= vocab_size):
        bad = ids[(ids < 0) | (ids >= vocab_size)][0]
        raise ValueError(
            f"{name} holds token id {int(bad)} outside the vocabulary (0..{vocab_size - 1})"
        )


@lru_cache(maxsize=64)
def compile_bad_words(
    bad_word_tokens: tuple[tuple[int, ...], ...],
) -> tuple[IdArray, dict[int, dict[tuple[int, ...], list[int]]]]:
    """Split into always-banned single tokens and {prefix length: {prefix: [last ids]}}."""
    singles = sorted({seq[0] for seq in bad_word_tokens if len(seq) == 1})
    by_length: dict[int, dict[tuple[int, ...], list[int]]] = {}
    for seq in bad_word_tokens:
        if len(seq) > 1:
            by_length.setdefault(len(seq) - 1, {}).setdefault(seq[:-1], []).append(seq[-1])
    return np.asarray(singles, dtype=np.int64), by_length


def bad_word_bans(bad_word_tokens: Sequence[Sequence[int]], history_ids: IdArray) -> list[int]:
    """The ids ``bad_word_tokens`` bans after ``history_ids`` (ascending, without duplicates).

    A sequence of N tokens bans its last token when the history ends with its first N-1;
    a single-token sequence is always banned.
    """
    singles, by_length = compile_bad_words(
        tuple(tuple(int(t) for t in s) for s in bad_word_tokens)
    )
    banned = set(singles.tolist())
    for length, prefixes in by_length.items():
        if length <= history_ids.shape[0]:
            tail = tuple(history_ids[-length:].tolist())
            banned.update(prefixes.get(tail, ()))
    return sorted(banned)


def apply_bad_words(
    logits: npt.NDArray[np.float64],
    *,
    bad_word_tokens: Sequence[Sequence[int]],
    prompt_ids: Sequence[int] | IdArray,
    generated_ids: Sequence[int] | IdArray,
) -> npt.NDArray[np.float64]:
    """Return a copy with the last token of every matching bad word set to -inf."""
    out = np.array(logits, dtype=np.float64, copy=True)
    banned = np.asarray(
        bad_word_bans(bad_word_tokens, history(prompt_ids, generated_ids)), dtype=np.int64
    )
    _check_ids("bad_word_tokens", banned, out.shape[0])
    out[banned] = NEG_INF
    return out


def no_repeat_ngram_bans(n: int, history_ids: IdArray) -> IdArray:
    """Ids that would complete an n-gram already present in ``history_ids`` (sorted, unique).

    For n > 1: every earlier occurrence of the last n-1 tokens bans the token that followed it.
    n = 1 means off (HF's ``no_repeat_ngram_size`` = 1 would ban every seen token; FriendliAI's
    default and minimum is 1, meaning no constraint).
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"no_repeat_ngram must be an integer >= 1, got {n!r}")
    length = history_ids.shape[0]
    if n == 1 or length < n:
        return np.empty(0, dtype=np.int64)
    starts = length - n + 1  # candidate n-gram starts i = 0 .. length-n; the last is excluded
    prefix = history_ids[starts:].tolist()  # the last n-1 tokens
    matches = history_ids[:starts] == prefix[0]  # window i = h[i : i+n-1] equals the prefix
    for offset in range(1, n - 1):
        matches &= history_ids[offset : offset + starts] == prefix[offset]
    return np.unique(history_ids[n - 1 :][matches])


def apply_no_repeat_ngram(
    logits: npt.NDArray[np.float64],
    *,
    n: int,
    prompt_ids: Sequence[int] | IdArray,
    generated_ids: Sequence[int] | IdArray,
) -> npt.NDArray[np.float64]:
    """Return a copy where no n-gram of prompt + generated can be completed a second time."""
    out = np.array(logits, dtype=np.float64, copy=True)
    hist = history(prompt_ids, generated_ids)
    _check_ids("prompt_ids + generated_ids", hist, out.shape[0])
    out[no_repeat_ngram_bans(n, hist)] = NEG_INF
    return out


def apply_min_tokens(
    logits: npt.NDArray[np.float64],
    *,
    min_tokens: int,
    num_generated: int,
    eos_ids: Collection[int],
) -> npt.NDArray[np.float64]:
    """Return a copy with the EOS ids at -inf while ``num_generated < min_tokens``."""
    if min_tokens < 0 or num_generated < 0:
        raise ValueError(
            f"min_tokens and num_generated must be >= 0, got {min_tokens!r}, {num_generated!r}"
        )
    out = np.array(logits, dtype=np.float64, copy=True)
    if num_generated < min_tokens and eos_ids:
        ids = np.fromiter(eos_ids, dtype=np.int64, count=len(eos_ids))
        _check_ids("eos_ids", ids, out.shape[0])
        out[ids] = NEG_INF
    return out
