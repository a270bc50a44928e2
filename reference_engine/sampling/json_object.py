"""``response_format: {"type": "json_object"}``: constrain the output to one JSON object.

Checking all V tokens against the grammar at every step costs milliseconds in Python, so the
constraint is applied in two parts:

1. **Cheap, in ``process_logits``** (``apply_json_object``, O(V) numpy): the EOS ids get -inf
   until the top-level object is complete; once it is complete, every token but EOS and
   whitespace-only tokens that fit the whitespace budget gets -inf; empty non-EOS tokens
   always get -inf (they would make no progress). This part is what the reported logprobs
   include.
2. **Lazy, in ``sample``** (``JsonTokenFilter``): the sampler draws from the truncated
   distribution and asks the filter about the one token it drew (``is_allowed``, a few
   microseconds). Only when that token is invalid does it ask for the full mask of the
   candidates (``allowed_mask``) and redraw among the valid ones. ``allowed_mask`` walks a
   byte trie of the vocabulary with the recognizer, pruning every subtree at the first byte
   the grammar rejects (inside a string, all string-safe tokens are accepted in one numpy
   operation and only tokens holding ``"``, ``\\``, control bytes or partial UTF-8 are
   walked); masks are cached by recognizer state, which repeats a lot in practice.

Consequences, documented for the API: the reported logprobs (and ``top_logprobs``) may list
tokens the grammar would reject at that step, and the chosen token's logprob is its processed
logprob, not renormalised over the valid tokens. A ``max_tokens`` cut can leave the object
incomplete (``finish_reason: "length"``); that is expected. If every valid token is banned by
other processors, ``sample`` raises ``NoAllowedTokenError``.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Sequence
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from .json_grammar import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_WHITESPACE,
    INITIAL_STATE,
    WHITESPACE,
    JsonGrammar,
    JsonState,
    is_complete,
    is_plain_string,
)

BoolArray = npt.NDArray[np.bool_]
_NOT_WHITESPACE = 1 << 30
_MASK_CACHE_SIZE = 1024
# One trie: per node, its (byte, child) pairs and the ids of the tokens that end there.
_Trie = tuple[list[tuple[tuple[int, int], ...]], list[tuple[int, ...]]]


def _build_trie(tokens: Sequence[tuple[int, bytes]]) -> _Trie:
    children: list[dict[int, int]] = [{}]
    ends: list[list[int]] = [[]]
    for token_id, data in tokens:
        node = 0
        for byte in data:
            nxt = children[node].get(byte)
            if nxt is None:
                nxt = len(children)
                children[node][byte] = nxt
                children.append({})
                ends.append([])
            node = nxt
        ends[node].append(token_id)
    return [tuple(sorted(kids.items())) for kids in children], [tuple(e) for e in ends]


def _string_safe(data: bytes) -> bool:
    """Valid from any in-string state at a character boundary, ending in the same kind."""
    if not data or b'"' in data or b"\\" in data or any(byte < 0x20 for byte in data):
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class JsonObjectConstraint:
    """The json_object grammar bound to one vocabulary (build once per model and share)."""

    def __init__(
        self,
        token_bytes: Sequence[bytes],
        *,
        max_whitespace: int = DEFAULT_MAX_WHITESPACE,
        max_depth: int = DEFAULT_MAX_DEPTH,
    ) -> None:
        self.grammar = JsonGrammar(max_whitespace=max_whitespace, max_depth=max_depth)
        self.token_bytes: tuple[bytes, ...] = tuple(bytes(t) for t in token_bytes)
        vocab = len(self.token_bytes)
        safe = np.fromiter((_string_safe(t) for t in self.token_bytes), dtype=bool, count=vocab)
        safe.flags.writeable = False
        self._string_safe: BoolArray = safe
        ws_len = [
            len(t) if t and all(b in WHITESPACE for b in t) else _NOT_WHITESPACE
            for t in self.token_bytes
        ]
        self._whitespace_len = np.asarray(ws_len, dtype=np.int64)
        self._empty_ids = np.asarray(
            [i for i, t in enumerate(self.token_bytes) if not t], dtype=np.int64
        )
        indexed = list(enumerate(self.token_bytes))
        self._trie = _build_trie([(i, t) for i, t in indexed if t])
        self._unsafe_trie = _build_trie([(i, t) for i, t in indexed if t and not safe[i]])
        self._masks: dict[JsonState, BoolArray] = {}
        self._lock = threading.Lock()

    @property
    def vocab_size(self) -> int:
        return len(self.token_bytes)

    def initial_state(self) -> JsonState:
        return INITIAL_STATE

    def is_allowed(self, state: JsonState, token_bytes: bytes) -> bool:
        """Whether appending ``token_bytes`` keeps the output a valid JSON-object prefix.

        Empty tokens are never allowed (no progress). EOS is not a byte string: the caller
        decides it with ``is_complete`` (``JsonTokenFilter`` does).
        """
        return bool(token_bytes) and self.grammar.advance(state, token_bytes) is not None

    def advance(self, state: JsonState, token_bytes: bytes) -> JsonState:
        """The state after ``token_bytes``; ValueError if the token is not allowed there."""
        new_state = self.grammar.advance(state, token_bytes)
        if new_state is None:
            raise ValueError(
                f"token bytes {token_bytes!r} are not allowed by the json_object grammar "
                f"in state {state!r}"
            )
        return new_state

    def is_complete(self, state: JsonState) -> bool:
        return is_complete(state)

    def allowed_mask(self, state: JsonState) -> BoolArray:
        """Read-only (V,) mask of the tokens whose bytes are allowed in ``state`` (EOS aside).

        Deterministic; cached by state (a bounded cache, first in first out).
        """
        mask = self._masks.get(state)
        if mask is not None:
            return mask
        found: list[int] = []
        if is_plain_string(state):
            mask = self._string_safe.copy()
            self._walk(self._unsafe_trie, state, found)
        else:
            mask = np.zeros(self.vocab_size, dtype=bool)
            self._walk(self._trie, state, found)
        mask[found] = True
        mask.flags.writeable = False
        with self._lock:
            if len(self._masks) >= _MASK_CACHE_SIZE:
                self._masks.pop(next(iter(self._masks)))
            self._masks[state] = mask
        return mask

    def _walk(self, trie: _Trie, state: JsonState, found: list[int]) -> None:
        kids, ends = trie
        step = self.grammar.step
        todo = [(0, state)]
        while todo:
            node, current = todo.pop()
            for byte, child in kids[node]:
                nxt = step(current, byte)
                if nxt is None:
                    continue
                if ends[child]:
                    found.extend(ends[child])
                if kids[child]:
                    todo.append((child, nxt))

    def whitespace_fits(self, state: JsonState) -> BoolArray:
        """Mask of the whitespace-only tokens that still fit the state's whitespace budget."""
        return self._whitespace_len <= self.grammar.max_whitespace - state[2]

    def token_filter(self, state: JsonState, eos_ids: Collection[int]) -> JsonTokenFilter:
        return JsonTokenFilter(self, state, eos_ids)

    @property
    def empty_ids(self) -> npt.NDArray[np.int64]:
        return self._empty_ids


class JsonTokenFilter:
    """The lazy filter ``sample`` consults: EOS only when complete, else the grammar."""

    __slots__ = ("_complete", "_constraint", "_eos", "_state")

    def __init__(
        self, constraint: JsonObjectConstraint, state: JsonState, eos_ids: Collection[int]
    ) -> None:
        self._constraint = constraint
        self._state = state
        self._eos = frozenset(eos_ids)
        self._complete = is_complete(state)

    def __call__(self, token_id: int) -> bool:
        if token_id in self._eos:
            return self._complete
        return self._constraint.is_allowed(self._state, self._constraint.token_bytes[token_id])

    def mask(self, token_ids: npt.NDArray[np.int64]) -> BoolArray:
        allowed = self._constraint.allowed_mask(self._state)
        if self._eos:
            allowed = allowed.copy()
            allowed[np.fromiter(self._eos, dtype=np.int64, count=len(self._eos))] = self._complete
        return allowed[token_ids]


def apply_json_object(
    logits: npt.NDArray[np.float64],
    *,
    constraint: JsonObjectConstraint,
    state: JsonState,
    eos_ids: Collection[int],
    exact: bool = False,
) -> npt.NDArray[np.float64]:
    """Return a copy with the cheap part of the constraint applied (see the module docstring).

    ``exact=True`` applies the full grammar mask instead (every invalid token -inf), which
    costs a trie walk per new state; the pipeline does not use it, tests and tools may.
    """
    if logits.shape[0] != constraint.vocab_size:
        raise ValueError(
            f"logits have {logits.shape[0]} entries but the json_object constraint's "
            f"vocabulary has {constraint.vocab_size}"
        )
    eos = np.fromiter(eos_ids, dtype=np.int64, count=len(eos_ids))
    complete = is_complete(state)
    if exact or complete:
        allowed = (
            constraint.allowed_mask(state).copy() if exact else constraint.whitespace_fits(state)
        )
        allowed[eos] = complete
        return np.where(allowed, logits, -np.inf)
    out = np.array(logits, dtype=np.float64, copy=True)
    out[eos] = -np.inf
    out[constraint.empty_ids] = -np.inf
    return out


@lru_cache(maxsize=8)
def _constraint_for(token_bytes: tuple[bytes, ...]) -> JsonObjectConstraint:
    return JsonObjectConstraint(token_bytes)


def json_object_constraint(token_bytes: Sequence[bytes]) -> JsonObjectConstraint:
    """The shared default-bounds constraint for a vocabulary (built once, then cached)."""
    key = token_bytes if isinstance(token_bytes, tuple) else tuple(token_bytes)
    return _constraint_for(key)
