"""vLLM's request extensions on OpenAI's wire: each has the effect vLLM's docs state.

Spec: the ``x-extension`` fields of ``CompletionRequest`` in ``spec/completions.yaml``, which
are vLLM's "Extra parameters" of the Completions API
(https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html#completions-api) with the
meanings of vLLM's ``SamplingParams``
(https://docs.vllm.ai/en/latest/api/vllm/sampling_params.html): ``min_tokens`` ("Minimum
number of tokens to generate per output sequence before EOS or stop_token_ids can be
generated").

A rule here runs for a profile that claims the extension's feature (``spec/profiles/vllm.yaml``
claims them); FriendliAI's wire has its own rules for the fields it shares (``samplers.py``).
"""

from __future__ import annotations

from conformance.check_context import CheckContext
from conformance.model import NotApplicable, Violation
from conformance.probes.samplers import MAX_TOKENS
from conformance.views import compact

from .base import API, MUST, OPENAI_WIRE, SCHEMAS, rule
from .common import choice_of, integer, usage_of

REQUEST = f"{SCHEMAS}/CompletionRequest/properties"
VLLM_SAMPLING = "https://docs.vllm.ai/en/latest/api/vllm/sampling_params.html (2026-12)"


@rule(
    "EXT-001", MUST, "min_tokens holds off the end",
    requirement=f"With min_tokens N (and max_tokens {MAX_TOKENS}, no stop), at least "
    f"min(N, {MAX_TOKENS}) tokens are generated, where the greedy answer alone may end sooner.",
    citation=f"{REQUEST}/min_tokens; {VLLM_SAMPLING}, min_tokens (\"Minimum number of tokens "
    "to generate per output sequence before EOS or stop_token_ids can be generated\")",
    source=API, probes=("min-tokens",), traits=OPENAI_WIRE, features=("min_tokens",),
    faults=("min-tokens-ignored",),
)
def min_tokens_holds_off_the_end(ctx: CheckContext) -> None:
    _, completion, _ = usage_of(ctx, "min-tokens", "min")
    asked = integer(ctx.request("min-tokens", "min").get("min_tokens"))
    if asked is None:
        raise NotApplicable("min-tokens/min sent no integer min_tokens")
    least = min(asked, MAX_TOKENS)
    if completion < least:
        raise Violation(
            f"{completion} tokens were generated under min_tokens {least}",
            expected=f">= {least}", actual=completion, path="usage.completion_tokens",
            exchange="min-tokens/min", evidence=compact(choice_of(ctx, "min-tokens", "min")),
        )
