"""Engine work sized up, and done so that a stop flag can interrupt it between prompts.

``engine.complete`` is one call however many prompts a request carries (``{"prompt": ["a"] *
100000}`` is valid JSON of 600 KB): once started on a thread it could not be stopped, and it
outlived its client and the server (issue 13, part 3). :func:`complete` runs it one prompt at a
time, checking the stop flag in between, and joins the parts into exactly the
:class:`Completion` the single call gives: choice ``index`` is ``prompt * n + k``, usage is the
sum, and a request without a seed gets its seeds drawn once for all prompts, as the engine
does. An error about prompt ``p`` names ``p``, as the single call's would.
"""

from __future__ import annotations

import random
import threading
from dataclasses import replace

from reference_engine import Engine
from reference_engine.errors import ContextLengthError
from reference_engine.request import GenerationRequest, PromptInput
from reference_engine.results import Choice, Completion, Usage

from .offload import check

INLINE_TOKENS = 256
"""Requests generating more tokens than this (prompts x candidates x max tokens) go to a
thread."""
INLINE_PROMPT_UNITS = 4096
"""... and so do requests whose prompts hold more characters (or token ids) than this, or
more than :data:`INLINE_PROMPTS` prompts: tokenizing and echo scoring grow with them."""
INLINE_PROMPTS = 16
_seeds = random.SystemRandom()


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


def complete(engine: Engine, generation: GenerationRequest, stop: threading.Event) -> Completion:
    """``engine.complete(generation)``, one prompt at a time; raises ``Stopped`` when told."""
    check(stop)
    if len(generation.prompts) == 1:
        return engine.complete(generation)
    seed = generation.seed
    if seed is None:
        seed = shared_seeds(generation)
    choices: list[Choice] = []
    prompt_tokens = 0
    for p, prompt in enumerate(generation.prompts):
        check(stop)
        part = complete_one(engine, generation, p, prompt, seed)
        choices.extend(part.choices)
        prompt_tokens += part.usage.prompt_tokens
    usage = Usage(prompt_tokens, sum(c.completion_tokens for c in choices))
    return Completion(tuple(choices), usage)


def shared_seeds(generation: GenerationRequest) -> int | tuple[int, ...]:
    """Seeds for a request without one, drawn once and shared by every prompt: the engine
    draws one per candidate k. A seed list must hold one per *choice* (``n``), so with
    ``best_of`` > ``n`` the shared seed is an int (candidate k gets ``seed + k``): a list of
    ``best_of`` seeds was refused as a 400, one of ``n`` fails inside the engine."""
    if generation.candidates != generation.n:
        return _seeds.getrandbits(62)
    return tuple(_seeds.getrandbits(63) for _ in range(generation.candidates))


def complete_one(engine: Engine, generation: GenerationRequest, p: int, prompt: PromptInput,
                 seed: int | tuple[int, ...] | None) -> Completion:
    """Prompt ``p`` of ``generation`` alone, its choices numbered as in the whole answer
    (``p * n + k``) and its errors naming prompt ``p``."""
    try:
        part = engine.complete(replace(generation, prompts=(prompt,), seed=seed))
    except ContextLengthError as error:
        raise _renumbered(error, p) from None
    if p == 0:
        return part
    choices = tuple(replace(c, index=p * generation.n + c.index) for c in part.choices)
    return Completion(choices, part.usage)


def _renumbered(error: ContextLengthError, index: int) -> ContextLengthError:
    """The error as the whole request would have raised it (``prompt 0`` -> ``prompt p``)."""
    if index == 0:
        return error
    message = error.message.replace("prompt 0 ", f"prompt {index} ", 1)
    return type(error)(message, param=error.param)


def heavy_answer(completion: Completion) -> bool:
    """Whether rendering ``completion`` is worth a thread (echo with logprobs on many long
    prompts renders tens of megabytes)."""
    if len(completion.choices) > INLINE_PROMPTS:
        return True
    size = 0
    for choice in completion.choices:
        size += len(choice.text) + 8 * len(choice.logprobs or ())
    return size > INLINE_PROMPT_UNITS
