"""``process_logits``: every logit-modifying processor, in one fixed order, then log-softmax.

The model's log-probabilities are the logits. The processors run in this order, each skipped
when its parameter is off:

1. ``logit_bias`` (additive): defined as added to the model's own scores, so it comes first
   and everything after it sees the biased score as the token's score;
2. ``bad_word_tokens`` and 3. ``no_repeat_ngram`` (-inf bans): value-independent, and once a
   logit is -inf every later processor keeps it -inf;
4. ``repetition_penalty`` (multiplicative, sign-dependent): before the additive OpenAI
   penalties so its sign test sees the (biased) model score, as vLLM does;
5. ``presence_penalty`` / ``frequency_penalty`` (additive, generated tokens only);
6. ``min_tokens`` (EOS -inf): after every processor that could raise EOS (a +100
   ``logit_bias`` on EOS cannot end the output early);
7. ``response_format`` (json_object, cheap part): last, so the grammar's bans hold whatever
   came before; the per-token grammar check is lazy, in ``sample`` (see ``json_object``).

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
import numpy.typing as npt

from .bans import apply_bad_words, apply_min_tokens, apply_no_repeat_ngram
from .bias import apply_logit_bias
from .context import SamplingContext
from .json_object import apply_json_object
from .logprobs import log_softmax
from .penalties import apply_presence_frequency_penalty, apply_repetition_penalty

FloatArray = npt.NDArray[np.float64]


def process_logits(logprobs: FloatArray, ctx: SamplingContext) -> FloatArray:
    """The reported distribution for this step (read-only; see the module docstring)."""
    params = ctx.params
    if logprobs.shape != (ctx.vocab_size,):
        raise ValueError(f"logprobs must have shape ({ctx.vocab_size},), got {logprobs.shape}")
    if not params.has_logit_processors and ctx.num_generated >= params.min_tokens:
        return logprobs
    x = logprobs
    if params.logit_bias:
        x = apply_logit_bias(x, params.logit_bias)
    if params.bad_word_tokens:
        x = apply_bad_words(
            x,
            bad_word_tokens=params.bad_word_tokens,
            prompt_ids=ctx.prompt_ids,
            generated_ids=ctx.generated_ids,
        )
    if params.no_repeat_ngram > 1:
        x = apply_no_repeat_ngram(
            x, n=params.no_repeat_ngram, prompt_ids=ctx.prompt_ids, generated_ids=ctx.generated_ids
        )
    if params.repetition_penalty != 1.0:
        x = apply_repetition_penalty(
            x,
            penalty=params.repetition_penalty,
            prompt_ids=ctx.prompt_ids,
            generated_ids=ctx.generated_ids,
        )
    if params.presence_penalty != 0.0 or params.frequency_penalty != 0.0:
        x = apply_presence_frequency_penalty(
            x,
            presence_penalty=params.presence_penalty,
            frequency_penalty=params.frequency_penalty,
            generated_ids=ctx.generated_ids,
        )
    if ctx.num_generated < params.min_tokens:
        x = apply_min_tokens(
            x, min_tokens=params.min_tokens, num_generated=ctx.num_generated, eos_ids=ctx.eos_ids
        )
    if ctx.json_constraint is not None and ctx.json_state is not None:
        x = apply_json_object(
            x, constraint=ctx.json_constraint, state=ctx.json_state, eos_ids=ctx.eos_ids
        )
    out = log_softmax(x, base=logprobs)
    out.flags.writeable = False
    return out
