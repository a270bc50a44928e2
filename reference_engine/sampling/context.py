"""``SamplingContext``: what the logit processors need for one step of one choice.

Immutable: ``advance(token_id)`` returns the context of the next step, so a context can be
kept, compared or replayed. Per-choice data (the params, the vocabulary, the EOS ids, the
prompt) is validated once at construction; the per-step data is the generated ids and, under
a constraining ``response_format``, the grammar state (``grammar.GrammarState``). Token
histories are held as read-only int64 arrays, because every history-based processor is a
numpy operation over them.

The history-based processors' inputs are kept up to date incrementally instead of being
recomputed from the whole history every step (O(history) numpy work per step): the ids seen
in prompt + generated (``seen_ids``, for ``repetition_penalty``), the generated ids with what
presence/frequency subtract from each (``presence_frequency_penalties``), the bans of
``no_repeat_ngram`` (an index of the n-grams seen) and of ``bad_word_tokens``. The results are
exactly those of the from-scratch functions in ``bans`` and ``penalties`` (tests compare them).

Storage: the prompt and generated ids of a chain of contexts live in one append-only store
(``_Tokens``), with the distinct ids in order of first occurrence and the n-gram index; a
context is the store plus its length (and its numbers of distinct ids), and ``generated_ids``
is a read-only view. ``advance`` appends in place when the context is the newest of its store
and copies the store otherwise (advancing an older context again: a branch), so every context
reads exactly its own history. The presence/frequency amounts are per context: computed from
scratch when first asked for, then carried forward by ``advance`` (one entry changes a step).
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Sequence

import numpy as np

from ..arrays import FloatArray, IdArray
from .allowed_tokens import OUT_OF_VOCAB_MESSAGE, allowed_id_array
from .bans import compile_bad_words, no_repeat_ngram_bans
from .grammar import (
    Grammar,
    GrammarFilter,
    GrammarState,
    compiled_grammar,
    grammar_vocabulary,
)
from .params import SamplingParams
from .response_format import grammar as grammar_text


def _frozen_ids(name: str, ids: Sequence[int] | IdArray, vocab_size: int) -> IdArray:
    array = np.array(ids, dtype=np.int64, copy=True).reshape(-1)
    if array.size and (array.min() < 0 or array.max() >= vocab_size):
        bad = array[(array < 0) | (array >= vocab_size)][0]
        raise ValueError(
            f"{name} holds token id {int(bad)} outside the vocabulary (0..{vocab_size - 1})"
        )
    array.flags.writeable = False
    return array


class _Buffer:
    """An append-only int64 array; views of its first values never change."""

    __slots__ = ("array", "size")

    def __init__(self, values: list[int]) -> None:
        self.array = np.zeros(max(64, 2 * len(values)), dtype=np.int64)
        self.array[: len(values)] = values
        self.size = len(values)

    def append(self, value: int) -> None:
        if self.size == self.array.shape[0]:
            grown = np.zeros(2 * self.size, dtype=np.int64)
            grown[: self.size] = self.array
            self.array = grown  # views of the old array stay valid and unchanged
        self.array[self.size] = value
        self.size += 1

    def view(self, start: int, stop: int) -> IdArray:
        view = self.array[start:stop]
        view.flags.writeable = False
        return view


class _Tokens:
    """The prompt + generated ids of a chain of contexts, append-only, with what the
    history-based processors need: the distinct ids in order of first occurrence (all, and
    generated only) with each one's position there, and the ``no_repeat_ngram`` index.

    A context is a prefix of it (its length, and its numbers of distinct ids); every structure
    here is append-only, so each context reads exactly its own prefix.
    """

    __slots__ = (
        "distinct",
        "distinct_position",
        "generated",
        "generated_position",
        "ids",
        "lock",
        "ngram_index",
        "ngram_n",
        "ngram_upto",
        "prompt_length",
        "tokens",
    )

    def __init__(self, ids: list[int], prompt_length: int) -> None:
        self.ids = ids
        self.prompt_length = prompt_length
        self.tokens = _Buffer(ids)
        self.distinct_position = {token: i for i, token in enumerate(dict.fromkeys(ids))}
        self.distinct = _Buffer(list(self.distinct_position))
        generated = dict.fromkeys(ids[prompt_length:])
        self.generated_position = {token: i for i, token in enumerate(generated)}
        self.generated = _Buffer(list(self.generated_position))
        self.lock = threading.Lock()
        self.ngram_index: dict[tuple[int, ...], set[int]] = {}
        self.ngram_n = 0
        self.ngram_upto = 0  # the n-grams ending before this position are indexed

    def append(self, length: int, token: int) -> _Tokens:
        """The store holding the first ``length`` ids and then ``token``: this one, extended
        in place, when ``length`` is its end; otherwise a copy (a branch)."""
        with self.lock:
            if len(self.ids) == length:
                self.ids.append(token)
                self.tokens.append(token)
                if token not in self.distinct_position:
                    self.distinct_position[token] = self.distinct.size
                    self.distinct.append(token)
                if token not in self.generated_position:
                    self.generated_position[token] = self.generated.size
                    self.generated.append(token)
                return self
        return _Tokens(self.ids[:length], self.prompt_length).append(length, token)

    def ngram_bans(self, n: int, length: int) -> list[int] | None:
        """``no_repeat_ngram_bans(n, ids[:length])`` from the index, as a sorted list; None
        when the index is ahead of ``length`` (an older context: compute it from scratch)."""
        with self.lock:
            if self.ngram_n != n:
                self.ngram_index, self.ngram_n, self.ngram_upto = {}, n, 0
            if self.ngram_upto > length:
                return None
            ids, index = self.ids, self.ngram_index
            for end in range(max(self.ngram_upto, n - 1), length):  # n-gram ids[end-n+1 : end+1]
                key = tuple(ids[end - n + 1 : end])
                followers = index.get(key)
                if followers is None:
                    index[key] = {ids[end]}
                else:
                    followers.add(ids[end])
            self.ngram_upto = length
            if length < n:
                return []
            followers = index.get(tuple(ids[length - n + 1 : length]))
            return sorted(followers) if followers else []


class _Prepared:
    """Per-choice data the processors derive from the params (shared along the chain)."""

    __slots__ = ("allowed_ids", "bad_singles", "bad_words", "bias_ids", "bias_values",
                 "eos_array")

    def __init__(self, params: SamplingParams, eos_ids: frozenset[int]) -> None:
        allowed = params.allowed_token_ids
        self.allowed_ids = None if allowed is None else allowed_id_array(allowed)
        bias = params.logit_bias
        self.bias_ids = np.fromiter(bias.keys(), dtype=np.int64, count=len(bias))
        self.bias_values = np.fromiter(bias.values(), dtype=np.float64, count=len(bias))
        self.eos_array = np.fromiter(sorted(eos_ids), dtype=np.int64, count=len(eos_ids))
        singles, self.bad_words = compile_bad_words(params.bad_word_tokens)
        self.bad_singles = frozenset(singles.tolist())


def _grown(array: np.ndarray) -> np.ndarray:
    """A copy of ``array`` with one more (unset) entry at the end."""
    out = np.empty(array.shape[0] + 1, dtype=array.dtype)
    out[:-1] = array
    return out


class SamplingContext:
    """Per-step inputs of ``process_logits`` and the token filter of ``sample``.

    Build it once per choice, then ``ctx = ctx.advance(token)`` after every generated token.
    ``grammar_state`` is None unless ``params.constrained``; it starts at the grammar's start
    advanced over ``generated_ids`` (so a context can resume mid-output). ``special_ids`` are
    the tokens the grammar must never match as text (the tokenizer's special tokens; default:
    the EOS ids); EOS ids are allowed only where the output may end, whatever their bytes.
    ``grammar`` overrides the one built from the params.
    """

    __slots__ = (
        "_distinct",
        "_generated",
        "_length",
        "_prepared",
        "_presence",
        "_tokens",
        "eos_ids",
        "grammar_state",
        "params",
        "prompt_ids",
        "token_bytes",
    )

    def __init__(
        self,
        params: SamplingParams,
        *,
        prompt_ids: Sequence[int] | IdArray,
        token_bytes: Sequence[bytes],
        eos_ids: Collection[int],
        generated_ids: Sequence[int] | IdArray = (),
        special_ids: Collection[int] = (),
        grammar: Grammar | None = None,
    ) -> None:
        vocab = len(token_bytes)
        if vocab == 0:
            raise ValueError("token_bytes must not be empty")
        self.params = params
        self.token_bytes = token_bytes
        self.eos_ids = frozenset(int(i) for i in eos_ids)
        bad_eos = [i for i in self.eos_ids if not 0 <= i < vocab]
        if bad_eos:
            raise ValueError(f"eos_ids holds token id {min(bad_eos)} outside the vocabulary")
        bad_bias = [i for i in params.logit_bias if i >= vocab]
        if bad_bias:
            raise ValueError(f"logit_bias token id {min(bad_bias)} is outside the vocabulary")
        allowed = params.allowed_token_ids
        if allowed is not None and allowed[-1] >= vocab:  # ascending, so the last is the max
            raise ValueError(f"{OUT_OF_VOCAB_MESSAGE} ({allowed[-1]} is outside 0..{vocab - 1})")
        self.prompt_ids = _frozen_ids("prompt_ids", prompt_ids, vocab)
        generated = _frozen_ids("generated_ids", generated_ids, vocab).tolist()
        tokens = _Tokens(self.prompt_ids.tolist() + generated, self.prompt_ids.shape[0])
        self._tokens = tokens
        self._length = len(tokens.ids)
        self._distinct = tokens.distinct.size
        self._generated = tokens.generated.size
        self._presence: tuple[IdArray, FloatArray] | None = None
        self._prepared = _Prepared(params, self.eos_ids)
        self.grammar_state: GrammarState | None = None
        if params.constrained:
            if grammar is None:
                key = token_bytes if isinstance(token_bytes, tuple) else tuple(token_bytes)
                specials = frozenset(int(i) for i in special_ids) or self.eos_ids
                vocabulary = grammar_vocabulary(key, specials)
                schema = params.response_schema
                text = grammar_text(params.response_format or "",
                                    schema if isinstance(schema, str) else None)
                grammar = compiled_grammar(vocabulary, text)
            if grammar.vocabulary.vocab_size != vocab:
                raise ValueError(
                    f"the grammar's vocabulary has {grammar.vocabulary.vocab_size} tokens, "
                    f"token_bytes {vocab}"
                )
            self.grammar_state = grammar.start(self.eos_ids, generated)

    @property
    def vocab_size(self) -> int:
        return len(self.token_bytes)

    @property
    def generated_ids(self) -> IdArray:
        """The generated ids (read-only)."""
        return self._tokens.tokens.view(self.prompt_ids.shape[0], self._length)

    @property
    def num_generated(self) -> int:
        return self._length - self.prompt_ids.shape[0]

    @property
    def history_ids(self) -> IdArray:
        """Prompt + generated ids (read-only)."""
        return self._tokens.tokens.view(0, self._length)

    def advance(self, token_id: int) -> SamplingContext:
        """The context after ``token_id`` was generated (this one is unchanged)."""
        if not 0 <= token_id < len(self.token_bytes):
            raise ValueError(f"token_id {token_id!r} is outside the vocabulary")
        token_id = int(token_id)
        new = object.__new__(SamplingContext)
        new.params = self.params
        new.token_bytes = self.token_bytes
        new.eos_ids = self.eos_ids
        new.prompt_ids = self.prompt_ids
        new._prepared = self._prepared
        new.grammar_state = None
        if self.grammar_state is not None:
            new.grammar_state = self.grammar_state.advance(token_id)
        tokens = self._tokens.append(self._length, token_id)
        new._tokens = tokens
        new._length = self._length + 1
        new._distinct = self._distinct + (tokens.distinct_position[token_id] >= self._distinct)
        position = tokens.generated_position[token_id]
        new._generated = self._generated + (position >= self._generated)
        new._presence = None
        if self._presence is not None:
            new._presence = self._count(self._presence, position)
        return new

    def _count(
        self, presence: tuple[IdArray, FloatArray], position: int
    ) -> tuple[IdArray, FloatArray]:
        """``presence`` with one more occurrence of the generated id at ``position``."""
        counts, amounts = presence
        if position < counts.shape[0]:
            counts, amounts = counts.copy(), amounts.copy()
            counts[position] += 1
        else:  # a new generated id: one more entry
            counts, amounts = _grown(counts), _grown(amounts)
            counts[position] = 1
        # The same IEEE operations as counts * frequency_penalty + presence_penalty in numpy.
        params = self.params
        amounts[position] = float(counts[position]) * params.frequency_penalty
        amounts[position] += params.presence_penalty
        counts.flags.writeable = False
        amounts.flags.writeable = False
        return counts, amounts

    # -- inputs of the history-based processors (see the module docstring) -----------------

    def allowed_ids(self) -> IdArray | None:
        """``params.allowed_token_ids`` as an ascending array; None when every token is."""
        return self._prepared.allowed_ids

    def logit_bias_arrays(self) -> tuple[IdArray, FloatArray]:
        """``params.logit_bias`` as arrays of ids (ascending) and biases."""
        return self._prepared.bias_ids, self._prepared.bias_values

    @property
    def eos_array(self) -> IdArray:
        """``eos_ids`` as an ascending array."""
        return self._prepared.eos_array

    def seen_ids(self) -> IdArray:
        """The ids occurring in prompt + generated, without duplicates, in order of first
        occurrence (read-only)."""
        return self._tokens.distinct.view(0, self._distinct)

    def presence_frequency_penalties(self) -> tuple[IdArray, FloatArray]:
        """The distinct generated ids (in order of first occurrence) and what the OpenAI
        penalties subtract from each: ``count * frequency_penalty + presence_penalty``."""
        if self._presence is None:
            tokens = self._tokens
            counts = np.zeros(self._generated, dtype=np.int64)
            position = tokens.generated_position
            for token in tokens.ids[tokens.prompt_length : self._length]:
                counts[position[token]] += 1
            params = self.params
            amounts: FloatArray = np.asarray(
                counts * params.frequency_penalty + params.presence_penalty, dtype=np.float64
            )
            counts.flags.writeable = False
            amounts.flags.writeable = False
            self._presence = (counts, amounts)
        presence = self._presence
        return self._tokens.generated.view(0, self._generated), presence[1]

    def no_repeat_ngram_bans(self, n: int) -> list[int] | IdArray:
        """``bans.no_repeat_ngram_bans(n, history_ids)`` (ascending ids)."""
        bans = self._tokens.ngram_bans(n, self._length)
        if bans is None:
            return no_repeat_ngram_bans(n, self.history_ids)
        return bans

    def bad_word_bans(self) -> list[int]:
        """``bans.bad_word_bans(params.bad_word_tokens, history_ids)`` (ascending ids)."""
        prepared = self._prepared
        banned = set(prepared.bad_singles)
        ids, length = self._tokens.ids, self._length
        for size, prefixes in prepared.bad_words.items():
            if size <= length:
                banned.update(prefixes.get(tuple(ids[length - size : length]), ()))
        return sorted(banned)

    def token_filter(self) -> GrammarFilter | None:
        """The lazy filter to pass to ``sample(allowed=...)``; None when unconstrained."""
        if self.grammar_state is None:
            return None
        return self.grammar_state.token_filter()

    @property
    def output_complete(self) -> bool:
        """True when a ``response_format`` grammar is on and accepts the output so far."""
        return self.grammar_state is not None and self.grammar_state.accepting

    def __repr__(self) -> str:
        return (
            f"SamplingContext(params={self.params!r}, prompt={self.prompt_ids.shape[0]} ids, "
            f"generated={self.generated_ids.tolist()!r}, "
            f"constrained={self.grammar_state is not None!r})"
        )
