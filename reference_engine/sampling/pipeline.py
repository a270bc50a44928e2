"""``process_logits``: every logit-modifying processor, in one fixed order, then log-softmax.

The model's log-probabilities are the logits. The processors run in this order, each skipped
when its parameter is off:

0. vLLM's ``allowed_token_ids`` (-inf outside the list, ``allowed_tokens``): first, as in
   vLLM's sampler; nothing after it can lift a -inf, so its place changes no value;
1. ``logit_bias`` (additive): defined as added to the model's own scores, so it comes first
   and everything after it sees the biased score as the token's score;
2. ``bad_word_tokens`` and 3. ``no_repeat_ngram`` (-inf bans): value-independent, and once a
   logit is -inf every later processor keeps it -inf;
4. ``repetition_penalty`` (multiplicative, sign-dependent): before the additive OpenAI
   penalties so its sign test sees the (biased) model score, as vLLM does;
5. ``presence_penalty`` / ``frequency_penalty`` (additive, generated tokens only);
6. ``min_tokens`` (EOS -inf): after every processor that could raise EOS (a +100
   ``logit_bias`` on EOS cannot end the output early);
7. ``response_format`` (the reported part of the grammar's mask): last, so the grammar's bans
   hold whatever came before; the rest of the grammar check is lazy, in ``sample`` (see
   ``grammar`` for what the reported logprobs include).

The processors share one copy of the logits, modified in place, and take their history-based
inputs from the context, which keeps them up to date incrementally (``context``); each gives
exactly what its ``apply_*`` function gives.

Then the result is re-normalised with log-softmax, bit-reproducibly (the values are reported;
see ``logprobs.log_softmax``). **That array is what the API reports**:
logprobs report the log-softmax of the logits after every logit-modifying processor and
before temperature and truncation; greedy picks its argmax. -inf entries stay -inf (report
them through ``finite_logprob``, which maps -inf to -9999.0). With every processor off the
model's array is returned as is (no copy): it is already normalised.

One step of the generation loop::

    ctx = SamplingContext(params, prompt_ids=..., token_bytes=..., eos_ids=...)  # per choice
    rng = SeededRng(seed)                                                        # per choice
    processed = process_logits(model_logprobs, ctx)
    token = sample(processed, params, rng, allowed=ctx.token_filter())
    reported = finite_logprob(processed[token]); alternatives = top_logprobs(processed, k)
    ctx = ctx.advance(token)
"""

from __future__ import annotations

import numpy as np

from ..arrays import FloatArray
from .allowed_tokens import keep_only
from .context import SamplingContext
from .grammar import apply_grammar
from .logprobs import log_softmax, sparse_log_softmax
from .penalties import penalise_repeated

_NEG_INF = -np.inf
_FEW = 8  # up to this many biases, Python indexing beats a fancy-index round trip


def process_logits(logprobs: FloatArray, ctx: SamplingContext) -> FloatArray:
    """The reported distribution for this step (read-only; see the module docstring)."""
    params = ctx.params
    if logprobs.shape != (ctx.vocab_size,):
        raise ValueError(f"logprobs must have shape ({ctx.vocab_size},), got {logprobs.shape}")
    num_generated = ctx.num_generated
    if not params.has_logit_processors and num_generated >= params.min_tokens:
        return logprobs
    state = ctx.grammar_state
    if params.grammar_only and state is not None and not state.accepting:
        # Only step 7 changes anything, and only at ids known in advance: the same values as
        # the general path below, without looking for what changed.
        out = sparse_log_softmax(logprobs, state.banned)
        out.flags.writeable = False
        return out
    allowed = None if params.allowed_token_ids is None else ctx.allowed_ids()
    if allowed is None:
        x = logprobs.astype(np.float64)  # a copy; the processors below modify it in place
    else:
        x = keep_only(logprobs, allowed)  # a new array, -inf outside the whitelist
    if params.logit_bias:
        if len(params.logit_bias) <= _FEW:
            for token, bias in params.logit_bias.items():
                x[token] += bias
        else:
            ids, values = ctx.logit_bias_arrays()
            x[ids] += values  # ids are unique (mapping keys), so fancy-index += is exact
    if params.bad_word_tokens:
        banned = ctx.bad_word_bans()
        if banned:
            if banned[0] < 0 or banned[-1] >= x.shape[0]:
                bad = next(t for t in banned if not 0 <= t < x.shape[0])
                raise ValueError(
                    f"bad_word_tokens holds token id {bad} outside the vocabulary "
                    f"(0..{x.shape[0] - 1})"
                )
            x[banned] = _NEG_INF
    if params.no_repeat_ngram > 1:
        banned_ids = ctx.no_repeat_ngram_bans(params.no_repeat_ngram)
        if len(banned_ids):
            x[banned_ids] = _NEG_INF
    if params.repetition_penalty != 1.0:
        penalise_repeated(x, ctx.seen_ids(), params.repetition_penalty)
    if params.presence_penalty != 0.0 or params.frequency_penalty != 0.0:
        ids, amounts = ctx.presence_frequency_penalties()
        if ids.shape[0]:
            x[ids] -= amounts
    if num_generated < params.min_tokens and ctx.eos_ids:
        x[ctx.eos_array] = _NEG_INF
    if ctx.grammar_state is not None:
        apply_grammar(x, ctx.grammar_state, ctx.eos_array)
    out = log_softmax(x, base=logprobs)
    out.flags.writeable = False
    return out
