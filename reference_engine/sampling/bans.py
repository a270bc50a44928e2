"""Hard bans (logit set to -inf): FriendliAI ``bad_word_tokens`` and ``no_repeat_ngram``, the
tables and searches that ``context.py`` and ``pipeline.py`` apply (``min_tokens`` is a line of
``pipeline.py``); the plainly written oracles the tests compare them with live under
``tests/reference_engine/sampling/sampling_oracles.py``.

Both look at the token history and set some logits to -inf; neither changes any other logit.
The history is prompt + generated (FriendliAI's ``no_repeat_ngram`` covers "the prompt plus
the output"; bad words are matched across the prompt/output boundary too, so a bad phrase
cannot be completed just because it started in the prompt); stop *sequences* are the
generation loop's business, not this module's.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..arrays import IdArray


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
