"""How large a request's work is: whether it runs on the engine's threads (``engine_threads``).

The event loop must never do work that grows with the request (issue 13). These are the
mock's thresholds for "grows": many prompts, long prompts, many tokens to generate, or a
long answer to render. They size the work only; what the work is belongs to the engine.
"""

from __future__ import annotations

from reference_engine import Engine
from reference_engine.request import GenerationRequest
from reference_engine.results import Completion

INLINE_TOKENS = 256
"""Requests generating more tokens than this (prompts x candidates x max tokens) go to a
thread."""
INLINE_PROMPT_UNITS = 4096
"""... and so do requests whose prompts hold more characters (or token ids) than this, or
more than :data:`INLINE_PROMPTS` prompts: tokenizing and echo scoring grow with them."""
INLINE_PROMPTS = 16


def off_loop(generation: GenerationRequest, engine: Engine) -> bool:
    """Whether the request's engine work is large enough to run on a worker thread."""
    if len(generation.prompts) > INLINE_PROMPTS:
        return True
    units = sum(len(prompt) for prompt in generation.prompts)
    return units > INLINE_PROMPT_UNITS or tokens_to_generate(generation, engine) > INLINE_TOKENS


def tokens_to_generate(generation: GenerationRequest, engine: Engine) -> int:
    per_choice = generation.max_tokens
    if per_choice is None:
        per_choice = generation.max_total_tokens or engine.context_length
    return len(generation.prompts) * generation.candidates * per_choice


def heavy_answer(completion: Completion) -> bool:
    """Whether rendering ``completion`` is worth a thread (echo with logprobs on many long
    prompts renders tens of megabytes)."""
    if len(completion.choices) > INLINE_PROMPTS:
        return True
    size = 0
    for choice in completion.choices:
        size += len(choice.text) + 8 * len(choice.logprobs or ())
    return size > INLINE_PROMPT_UNITS
