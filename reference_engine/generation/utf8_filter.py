"""Keep sampled text valid UTF-8: a lazy token filter for the sampler.

Byte-level BPE can emit byte sequences that are not UTF-8 (a stray continuation byte, a lead
byte followed by the wrong bytes); decoding would then produce U+FFFD, which real clients
treat as corruption. The model gives such continuations a small, non-zero probability (its
uniform floor), so unfiltered sampling would produce them now and then. This filter rejects
them at draw time, without changing the reported distribution: the sampler redraws among the
tokens that keep the output decodable (see ``sampling.sampler``).

The state is the number of continuation bytes the decoder still waits for (0-3); per state,
a boolean mask over the vocabulary is computed once per tokenizer.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from ..arrays import BoolArray, IdArray


def _sequence_length(lead: int) -> int:
    if lead < 0x80:
        return 1
    if 0xC2 <= lead <= 0xDF:
        return 2
    if 0xE0 <= lead <= 0xEF:
        return 3
    if 0xF0 <= lead <= 0xF4:
        return 4
    return 0  # a continuation byte or an invalid lead


def continues_validly(data: bytes, waiting: int) -> tuple[bool, int]:
    """Whether ``data`` may follow a stream waiting for ``waiting`` continuation bytes.

    Returns (valid, continuation bytes still awaited after ``data``). Checks structure only
    (lead and continuation bytes), not overlong forms or surrogates: the model learned those
    from valid text and the decoder would still handle them.
    """
    for byte in data:
        if waiting:
            if not 0x80 <= byte <= 0xBF:
                return False, 0
            waiting -= 1
            continue
        length = _sequence_length(byte)
        if length == 0:
            return False, 0
        waiting = length - 1
    return True, waiting


class Utf8Filter:
    """The sampler's ``allowed`` protocol for one decoder state, and the state after each
    token (``after``: ``continues_validly(token bytes, state)[1]`` by id, so the generation
    loop looks it up instead of walking the token's bytes every step)."""

    __slots__ = ("_allowed", "_mask", "after")

    def __init__(self, mask: BoolArray, after: Sequence[int]) -> None:
        self._mask = mask
        self._allowed: list[bool] = mask.tolist()
        self.after = after

    def __call__(self, token_id: int) -> bool:
        return self._allowed[token_id]

    def mask(self, token_ids: IdArray) -> BoolArray:
        return self._mask[token_ids]


class AllOf:
    """Several token filters at once (a token must pass each)."""

    __slots__ = ("_filters",)

    def __init__(self, *filters: object) -> None:
        self._filters = filters

    def __call__(self, token_id: int) -> bool:
        return all(f(token_id) for f in self._filters)  # type: ignore[operator]

    def mask(self, token_ids: IdArray) -> BoolArray:
        result = np.ones(token_ids.shape[0], dtype=bool)
        for f in self._filters:
            result &= f.mask(token_ids)  # type: ignore[attr-defined]
        return result


@functools.lru_cache(maxsize=4)
def _tables(token_bytes: tuple[bytes, ...], special_ids: frozenset[int]
            ) -> tuple[tuple[BoolArray, tuple[int, ...]], ...]:
    """Per decoder state: the mask of allowed ids and the state after each id."""
    tables = []
    for waiting in range(4):
        results = [continues_validly(data, waiting) for data in token_bytes]
        mask = np.array([valid for valid, _ in results], dtype=bool)
        for special in special_ids:
            mask[special] = waiting == 0  # a special token never splits a character
        mask.flags.writeable = False
        tables.append((mask, tuple(after for _, after in results)))
    return tuple(tables)


def utf8_filters(
    token_bytes: Sequence[bytes], special_ids: frozenset[int]
) -> tuple[Utf8Filter, ...]:
    """One filter per decoder state (0-3 awaited continuation bytes)."""
    return tuple(Utf8Filter(mask, after)
                 for mask, after in _tables(tuple(token_bytes), special_ids))
