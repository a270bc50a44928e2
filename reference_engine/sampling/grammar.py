"""Constrained decoding with llguidance: which tokens may come next under ``response_format``.

llguidance (what vLLM, SGLang and llama.cpp use) walks a grammar over the bytes of our
byte-level BPE vocabulary. This module binds a grammar (``response_format.grammar``) to the
vocabulary and follows one choice through it:

* ``GrammarVocabulary``: our token bytes as an ``llguidance.LLTokenizer`` (the special tokens
  marked special, so their text never matches a grammar), built once per vocabulary;
* ``Grammar``: one compiled grammar on that vocabulary; each choice starts from a copy;
* ``GrammarState``: where one choice is, shared along its chain of sampling contexts (the
  context that is the chain's tip moves the matcher in place; an older one replays);
* ``GrammarFilter``: the lazy ``TokenFilter`` ``sample`` consults;
* ``apply_grammar``: the part of the constraint ``process_logits`` applies (reported).

**What the reported logprobs include** (the contract; tests pin it): the end-of-text ids get
-inf until the grammar accepts the output so far, and at the steps where it accepts, every
token the grammar rejects gets -inf too (the whole mask). At the other steps the grammar's
verdict on ordinary tokens is *not* in the reported logprobs (nor in ``top_logprobs``): it is
applied lazily by ``sample``, which draws from the truncated distribution, asks the filter
about the token drawn (a few microseconds) and, only if it is rejected, masks the candidates
and redraws among the valid ones (exactly a draw from the truncated distribution restricted to
the valid tokens; see ``sampler``). So before the mask at most steps, after it where the
output may end; the chosen token's reported logprob is its processed logprob, not renormalised
over the valid tokens. Masking only ever removes tokens: it never changes the value, or the
arithmetic, of an allowed one. Why lazy rather than the whole mask at every step: it is what
json_object did before llguidance, so its outputs (and the golden file) stay the same bytes,
and a mask is computed only at the steps whose first draw is rejected.

Exactness: llguidance's mask leaves out tokens it could accept when the grammar forces the
next bytes (it keeps only the forced bytes' canonical token). The filter is byte-exact
instead: in a forced state the mask is completed with the tokens that are a prefix of the
forced bytes, and those starting with them that the matcher accepts, so the valid set is what
the grammar accepts byte for byte (the tests compare it with a plainly written recognizer).

UTF-8: llguidance's grammars match Unicode text only (it refuses a pattern that "can match
invalid UTF-8"), so a grammar's valid set never holds a token the engine's UTF-8 filter
would reject; the generation loop uses the grammar's filter alone.

Deterministic: llguidance's matching has no floating point and no randomness; its answers
depend on the grammar, the vocabulary and the tokens consumed only.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Collection, Sequence
from functools import lru_cache

import llguidance
import numpy as np

from ..arrays import BoolArray, FloatArray, IdArray


class _Vocabulary:
    """The duck-typed tokenizer ``llguidance.TokenizerWrapper`` reads."""

    def __init__(self, token_bytes: Sequence[bytes], special_ids: Sequence[int]) -> None:
        self.tokens = list(token_bytes)
        self.special_token_ids = list(special_ids)
        self.eos_token_id = special_ids[0] if special_ids else len(token_bytes) - 1
        self.bos_token_id = None
        self._index = {data: i for i, data in enumerate(token_bytes) if i not in special_ids}

    def __call__(self, text: str) -> list[int]:
        """Greedy longest-match tokenization (llguidance asks only for forced bytes' tokens)."""
        if not isinstance(text, str):
            raise TypeError("text only")  # TokenizerWrapper then passes str
        data, out, start = text.encode("utf-8"), [], 0
        while start < len(data):
            for end in range(len(data), start, -1):
                token = self._index.get(data[start:end])
                if token is not None:
                    out.append(token)
                    start = end
                    break
            else:
                raise ValueError(f"byte {data[start]:#x} is not a token")
        return out


class GrammarVocabulary:
    """A vocabulary as llguidance sees it, plus the index the exact mask needs."""

    def __init__(self, token_bytes: Sequence[bytes], special_ids: Collection[int]) -> None:
        self.token_bytes: tuple[bytes, ...] = tuple(bytes(t) for t in token_bytes)
        specials = sorted(special_ids)
        self.tokenizer = llguidance.LLTokenizer(
            llguidance.TokenizerWrapper(_Vocabulary(self.token_bytes, specials))
        )
        ordinary = [(data, i) for i, data in enumerate(self.token_bytes)
                    if i not in special_ids and data]
        ordinary.sort()
        self._sorted_bytes = [data for data, _ in ordinary]
        self._sorted_ids = [i for _, i in ordinary]
        self._by_bytes: dict[bytes, list[int]] = {}
        for data, i in ordinary:
            self._by_bytes.setdefault(data, []).append(i)
        empty = [i for i, data in enumerate(self.token_bytes) if not data]
        self.empty_ids = np.asarray(empty, dtype=np.int64)
        self.empty_ids.flags.writeable = False

    @property
    def vocab_size(self) -> int:
        return len(self.token_bytes)

    @property
    def mask_bytes(self) -> int:
        """Bytes of llguidance's bit mask (32-bit words, one bit per token)."""
        return 4 * ((len(self.token_bytes) + 31) // 32)

    def prefixes_of(self, forced: bytes) -> list[int]:
        """Tokens whose bytes are a non-empty prefix of ``forced``."""
        found: list[int] = []
        for end in range(1, len(forced) + 1):
            found.extend(self._by_bytes.get(forced[:end], ()))
        return found

    def starting_with(self, forced: bytes) -> list[int]:
        """Tokens whose bytes start with ``forced`` (``forced`` itself included)."""
        position = bisect.bisect_left(self._sorted_bytes, forced)
        found = []
        while position < len(self._sorted_bytes) and self._sorted_bytes[position].startswith(
            forced
        ):
            found.append(self._sorted_ids[position])
            position += 1
        return found


@lru_cache(maxsize=4)
def grammar_vocabulary(
    token_bytes: tuple[bytes, ...], special_ids: frozenset[int]
) -> GrammarVocabulary:
    """The shared ``GrammarVocabulary`` of a vocabulary (built once, then cached)."""
    return GrammarVocabulary(token_bytes, special_ids)


class Grammar:
    """One llguidance grammar compiled for one vocabulary; ``start`` gives a choice its state.

    The grammar text must be valid (``response_format.grammar`` checks it); a matcher that
    still fails to build raises ``ValueError``.
    """

    def __init__(self, vocabulary: GrammarVocabulary, grammar_text: str) -> None:
        self.vocabulary = vocabulary
        self._initial = llguidance.LLMatcher(vocabulary.tokenizer, grammar_text, log_level=0)
        if self._initial.is_error():
            raise ValueError(f"the grammar does not compile: {self._initial.get_error()}")
        self._lock = threading.Lock()

    def matcher(self) -> llguidance.LLMatcher:
        """A fresh matcher at the start of the grammar."""
        with self._lock:
            return self._initial.deep_copy()

    def start(self, eos_ids: Collection[int], tokens: Sequence[int] = ()) -> GrammarState:
        """A choice's state after ``tokens`` (end-of-text ids among them are skipped)."""
        state = GrammarState(self, frozenset(int(i) for i in eos_ids))
        for token in tokens:
            state = state.advance(int(token))
        return state


@lru_cache(maxsize=64)
def compiled_grammar(vocabulary: GrammarVocabulary, grammar_text: str) -> Grammar:
    """The shared ``Grammar`` for a vocabulary and grammar text (compiled once, then cached)."""
    return Grammar(vocabulary, grammar_text)


class _Walk:
    """A matcher and the state that owns it: the only state that may move it in place.

    ``pending`` is a token the owner's ``allows`` consumed on trial (checking a token and
    consuming it cost the same, and the token checked is nearly always the one generated):
    ``advance`` with that token keeps it, anything else rolls it back first.
    """

    __slots__ = ("mask", "matcher", "owner", "pending")

    def __init__(self, matcher: llguidance.LLMatcher, owner: GrammarState) -> None:
        self.matcher = matcher
        self.owner = owner
        self.mask: BoolArray | None = None  # the owner's full mask, once computed
        self.pending = -1

    def settle(self) -> llguidance.LLMatcher:
        """The matcher at the owner's state (a trial token rolled back)."""
        if self.pending >= 0:
            self.matcher.rollback(1)
            self.pending = -1
        return self.matcher


class GrammarState:
    """Where one choice is in its grammar; immutable to its users (``advance`` gives a new one).

    The states of a choice's chain share one matcher (``_Walk``): the newest state owns it and
    ``advance`` moves it in place; an older state asked anything replays its tokens into a
    fresh matcher first (tests do that; the generation loop never does). Like the choice it
    follows, a chain is used by one thread at a time (the matcher is not locked).
    """

    __slots__ = ("_accepting", "_eos_array", "_parent", "_token", "_walk", "banned", "eos_ids",
                 "grammar")

    def __init__(self, grammar: Grammar, eos_ids: frozenset[int]) -> None:
        self.grammar = grammar
        self.eos_ids = eos_ids
        self._eos_array = np.fromiter(sorted(eos_ids), dtype=np.int64, count=len(eos_ids))
        self.banned = np.union1d(self._eos_array, grammar.vocabulary.empty_ids)
        """What ``apply_grammar`` bans while the grammar does not accept (ascending ids)."""
        self.banned.flags.writeable = False
        self._parent: GrammarState | None = None
        self._token = -1
        self._walk = _Walk(grammar.matcher(), self)
        self._accepting: bool | None = None

    def _tokens(self) -> list[int]:
        tokens, state = [], self
        while state._parent is not None:
            tokens.append(state._token)
            state = state._parent
        return tokens[::-1]

    def _own(self) -> _Walk:
        """This state's walk, replayed into a fresh matcher if a newer state moved it on."""
        walk = self._walk
        if walk.owner is not self:
            walk = self._walk = self._replayed()
        return walk

    def _replayed(self) -> _Walk:
        """A fresh walk at this state (the tokens from the start replayed)."""
        matcher = self.grammar.matcher()
        if not matcher.consume_tokens(self._tokens()):
            raise ValueError(f"replay failed: {matcher.get_error()}")
        return _Walk(matcher, self)

    def advance(self, token_id: int) -> GrammarState:
        """The state after ``token_id`` (an end-of-text id leaves the grammar where it is).

        ValueError if the grammar does not allow the token here.
        """
        if token_id in self.eos_ids:
            return self
        walk = self._walk
        if walk.owner is not self:
            walk = self._walk = self._replayed()
        if walk.pending == token_id:  # consumed on trial by allows(): keep it
            walk.pending = -1
        elif not walk.settle().consume_token(token_id):
            data = self.grammar.vocabulary.token_bytes[token_id]
            error = walk.matcher.get_error().splitlines()[0]
            walk.matcher = self.grammar.matcher()  # the old one is in its error state
            walk.owner = _NOBODY
            raise ValueError(
                f"token {token_id} ({data!r}) is not allowed by the response_format "
                f"grammar here: {error}"
            )
        new = object.__new__(GrammarState)
        new.grammar, new.eos_ids, new._eos_array = self.grammar, self.eos_ids, self._eos_array
        new.banned = self.banned
        new._parent, new._token, new._accepting, new._walk = self, token_id, None, walk
        walk.owner, walk.mask = new, None
        return new

    @property
    def accepting(self) -> bool:
        """The output so far is complete: end-of-text may come now."""
        if self._accepting is None:
            self._accepting = bool(self._own().settle().is_accepting())
        return self._accepting

    def allows(self, token_id: int) -> bool:
        """Whether ``token_id`` may come next (byte-exact; end-of-text when accepting)."""
        if token_id in self.eos_ids:
            return self.accepting
        if not self.grammar.vocabulary.token_bytes[token_id]:
            return False  # an empty token would make no progress
        walk = self._walk
        if walk.owner is not self:
            walk = self._walk = self._replayed()
        if walk.pending == token_id:
            return True
        if walk.mask is not None:
            return bool(walk.mask[token_id])
        if walk.settle().try_consume_tokens([token_id]) != 1:
            return False
        walk.pending = token_id
        return True

    def allowed_mask(self) -> BoolArray:
        """Read-only (V,) mask of every token that may come next (end-of-text included)."""
        walk = self._own()
        if walk.mask is not None:
            return walk.mask
        matcher = walk.settle()
        vocabulary = self.grammar.vocabulary
        bits = np.empty(vocabulary.mask_bytes, dtype=np.uint8)
        matcher.unsafe_compute_mask_ptr(bits.ctypes.data, bits.shape[0])
        mask = np.unpackbits(bits, count=vocabulary.vocab_size, bitorder="little").view(np.bool_)
        forced = matcher.compute_ff_bytes()
        if forced:  # llguidance keeps only the forced bytes' canonical token: add the rest
            mask[vocabulary.prefixes_of(forced)] = True
            for token in vocabulary.starting_with(forced):
                if not mask[token] and matcher.validate_tokens([token]) == 1:
                    mask[token] = True
        if vocabulary.empty_ids.shape[0]:
            mask[vocabulary.empty_ids] = False
        if self._eos_array.shape[0]:
            if self._accepting is None:
                self._accepting = bool(matcher.is_accepting())
            mask[self._eos_array] = self._accepting
        mask.flags.writeable = False
        walk.mask = mask
        return mask

    def token_filter(self) -> GrammarFilter:
        return GrammarFilter(self)


_NOBODY = object.__new__(GrammarState)  # owns a walk whose matcher was reset after an error


class GrammarFilter:
    """The lazy filter ``sample`` consults: one token (cheap), or a bulk mask (fallback)."""

    __slots__ = ("_state",)

    def __init__(self, state: GrammarState) -> None:
        self._state = state

    def __call__(self, token_id: int) -> bool:
        return self._state.allows(token_id)

    def mask(self, token_ids: IdArray) -> BoolArray:
        return self._state.allowed_mask()[token_ids]


def apply_grammar(logits: FloatArray, state: GrammarState, eos_ids: IdArray) -> None:
    """The reported part of the constraint, in place (see the module docstring).

    Not accepting: end-of-text and empty tokens get -inf. Accepting: every token the grammar
    rejects gets -inf.
    """
    if state.accepting:
        logits[~state.allowed_mask()] = -np.inf
        return
    if eos_ids.shape[0]:
        logits[eos_ids] = -np.inf
    empty = state.grammar.vocabulary.empty_ids
    if empty.shape[0]:
        logits[empty] = -np.inf
