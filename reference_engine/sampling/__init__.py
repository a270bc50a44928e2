"""Logits processing and sampling for the reference engine: pure functions over numpy arrays.

Per step: ``process_logits(model_logprobs, ctx)`` applies the logit-modifying processors in
one documented order and re-normalises (that is the distribution the API reports), then
``sample(processed, params, rng, allowed=ctx.token_filter())`` applies temperature and
truncation and makes one seeded draw. See ``pipeline`` and ``sampler`` for the contracts.

Modules: ``params`` (request parameters), ``context`` (per-step inputs and the incremental
state of the bans and penalties), ``penalties``, ``bans`` (the logit processors' tables),
``allowed_tokens`` (vLLM's whitelist), ``response_format`` + ``grammar`` (constrained
decoding with llguidance), ``pipeline`` (every processor, in its order: the one production
version; tests compare it with plainly written oracles under
``tests/reference_engine/sampling/``), ``logprobs`` (what is reported), ``truncation`` +
``sampler`` + ``rng`` (the draw), ``errors``.

A new logit processor: its parameter on ``SamplingParams`` (``params``), its step in
``process_logits`` (``pipeline``; state it needs across steps in ``context``), its wire field
in the mock server's wire layer (``wire/requests.py``), and its oracle beside the others in
the tests.
"""

from __future__ import annotations

from .context import SamplingContext
from .errors import NoAllowedTokenError
from .grammar import (
    Grammar,
    GrammarFilter,
    GrammarState,
    GrammarVocabulary,
    apply_grammar,
    compiled_grammar,
    grammar_vocabulary,
)
from .logprobs import LOGPROB_FLOOR, finite_logprob, log_softmax, top_logprobs
from .params import FrozenMap, InvalidParameter, SamplingParams, WrongParameterType
from .pipeline import process_logits
from .rng import SeededRng
from .sampler import TokenFilter, greedy, sample
from .truncation import min_p_filter, top_k_filter, top_p_filter, xtc_filter

__all__ = [
    "LOGPROB_FLOOR",
    "FrozenMap",
    "Grammar",
    "GrammarFilter",
    "GrammarState",
    "GrammarVocabulary",
    "InvalidParameter",
    "NoAllowedTokenError",
    "SamplingContext",
    "SamplingParams",
    "SeededRng",
    "TokenFilter",
    "WrongParameterType",
    "apply_grammar",
    "compiled_grammar",
    "finite_logprob",
    "grammar_vocabulary",
    "greedy",
    "log_softmax",
    "min_p_filter",
    "process_logits",
    "sample",
    "top_k_filter",
    "top_logprobs",
    "top_p_filter",
    "xtc_filter",
]
