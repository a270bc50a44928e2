"""``SamplingContext``: what the logit processors need for one step of one choice.

Immutable: ``advance(token_id)`` returns the context of the next step, so a context can be
kept, compared or replayed. Per-choice data (the params, the vocabulary, the EOS ids, the
prompt) is validated once at construction; the per-step data is the generated ids and, for
``json_object``, the grammar state. Token histories are held as read-only int64 arrays,
because every history-based processor is a numpy operation over them.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
import numpy.typing as npt

from .json_grammar import JsonState, is_complete
from .json_object import JsonObjectConstraint, JsonTokenFilter, json_object_constraint
from .params import SamplingParams

IdArray = npt.NDArray[np.int64]


def _frozen_ids(name: str, ids: Sequence[int] | IdArray, vocab_size: int) -> IdArray:
    array = np.array(ids, dtype=np.int64, copy=True).reshape(-1)
    if array.size and (array.min() < 0 or array.max() >= vocab_size):
        bad = array[(array < 0) | (array >= vocab_size)][0]
        raise ValueError(
            f"{name} holds token id {int(bad)} outside the vocabulary (0..{vocab_size - 1})"
        )
    array.flags.writeable = False
    return array


class SamplingContext:
    """Per-step inputs of ``process_logits`` and the token filter of ``sample``.

    Build it once per choice, then ``ctx = ctx.advance(token)`` after every generated token.
    ``json_state`` is None unless ``params.json_object``; it starts at the grammar's initial
    state advanced over ``generated_ids`` (so a context can resume mid-output).
    """

    __slots__ = (
        "eos_ids",
        "generated_ids",
        "json_constraint",
        "json_state",
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
        json_constraint: JsonObjectConstraint | None = None,
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
        self.prompt_ids = _frozen_ids("prompt_ids", prompt_ids, vocab)
        self.generated_ids = _frozen_ids("generated_ids", generated_ids, vocab)
        self.json_constraint: JsonObjectConstraint | None = None
        self.json_state: JsonState | None = None
        if params.json_object:
            constraint = json_constraint or json_object_constraint(token_bytes)
            if constraint.vocab_size != vocab:
                raise ValueError(
                    f"json_constraint vocabulary has {constraint.vocab_size} tokens, "
                    f"token_bytes {vocab}"
                )
            state = constraint.initial_state()
            for token in self.generated_ids.tolist():
                if token not in self.eos_ids:
                    state = constraint.advance(state, token_bytes[token])
            self.json_constraint, self.json_state = constraint, state

    @property
    def vocab_size(self) -> int:
        return len(self.token_bytes)

    @property
    def num_generated(self) -> int:
        return int(self.generated_ids.shape[0])

    def advance(self, token_id: int) -> SamplingContext:
        """The context after ``token_id`` was generated (this one is unchanged)."""
        if not 0 <= token_id < len(self.token_bytes):
            raise ValueError(f"token_id {token_id!r} is outside the vocabulary")
        new = object.__new__(SamplingContext)
        new.params = self.params
        new.token_bytes = self.token_bytes
        new.eos_ids = self.eos_ids
        new.prompt_ids = self.prompt_ids
        generated = np.append(self.generated_ids, np.int64(token_id))
        generated.flags.writeable = False
        new.generated_ids = generated
        new.json_constraint = self.json_constraint
        new.json_state = self.json_state
        if self.json_constraint is not None and self.json_state is not None:
            if token_id not in self.eos_ids:
                new.json_state = self.json_constraint.advance(
                    self.json_state, self.token_bytes[token_id]
                )
        return new

    def token_filter(self) -> JsonTokenFilter | None:
        """The lazy filter to pass to ``sample(allowed=...)``; None when unconstrained."""
        if self.json_constraint is None or self.json_state is None:
            return None
        return self.json_constraint.token_filter(self.json_state, self.eos_ids)

    @property
    def json_complete(self) -> bool:
        """True when ``json_object`` is on and the top-level object is closed."""
        return self.json_state is not None and is_complete(self.json_state)

    def __repr__(self) -> str:
        return (
            f"SamplingContext(params={self.params!r}, prompt={self.prompt_ids.shape[0]} ids, "
            f"generated={self.generated_ids.tolist()!r}, json_state={self.json_state!r})"
        )
