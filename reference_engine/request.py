"""What the engine is asked to do: a domain request, independent of any wire format.

The mock builds a :class:`GenerationRequest` from a validated JSON body (its wire layer);
the engine never sees JSON. ``null`` / absent wire fields become the defaults here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import InvalidRequestError
from .sampling import SamplingParams

PromptInput = str | tuple[int, ...]
"""A prompt as text or as token ids."""


@dataclass(frozen=True)
class GenerationRequest:
    """One completion request: prompts x n choices (best_of candidates each).

    ``max_tokens`` None means "until the context is full" (FriendliAI without ``max_tokens``);
    the OpenAI default of 16 is applied by the wire layer. ``seed`` None lets the engine draw
    seeds (returned per choice); an int gives choice k of every prompt the seed ``seed + k``; a
    tuple gives one seed per choice k.
    """

    prompts: tuple[PromptInput, ...]
    sampling: SamplingParams = field(default_factory=SamplingParams)
    n: int = 1
    best_of: int | None = None
    echo: bool = False
    logprobs: int | None = None
    max_tokens: int | None = 16
    max_total_tokens: int | None = None
    min_total_tokens: int | None = None
    stop: tuple[str, ...] = ()
    stop_token_sequences: tuple[tuple[int, ...], ...] = ()
    eos_token_ids: tuple[int, ...] = ()
    bad_words: tuple[str, ...] = ()
    seed: int | tuple[int, ...] | None = None
    forced_output_tokens: tuple[int, ...] = ()
    ignore_eos: bool = False
    """vLLM's ``ignore_eos``: end-of-text neither ends the choice nor is sampled, so it runs to
    ``max_tokens`` or a stop."""
    stop_token_ids: tuple[int, ...] = ()
    """vLLM's ``stop_token_ids``: single tokens that end the choice (held off by
    ``min_tokens`` like end-of-text); the choice's ``stop_reason`` names the id."""
    include_stop_str_in_output: bool = False
    """vLLM's flag: the matched stop string (or stop token's text) stays at the end of the text."""
    prompt_logprobs: int | None = None
    """vLLM's ``prompt_logprobs``: per prompt position the prompt token and this many of the
    most likely tokens, with logprob and rank (non-streamed answers)."""
    tokens_as_ids: bool = False
    """vLLM's ``return_tokens_as_token_ids``: logprobs name tokens ``token_id:N``."""
    truncate_prompt_tokens: int | None = None
    """vLLM's ``truncate_prompt_tokens``: each prompt keeps only its last N tokens (-1: as many
    as fit beside ``max_tokens``) for generation, usage and prompt logprobs; echo still
    returns the prompt as sent, as vLLM's does."""
    vllm_fields: bool = False
    """The answer carries vLLM's response extensions (``stop_reason``, ``prompt_logprobs``):
    the wire layer sets it for bodies only vLLM's contract accepts."""
    prompt_field: str = "prompt"
    """The wire field the prompts came from (``prompt``, or FriendliAI's ``tokens``): errors
    about a prompt name it."""

    def __post_init__(self) -> None:
        if not self.prompts:
            raise InvalidRequestError("at least one prompt is required", param="prompt")
        if self.n < 1:
            raise InvalidRequestError(f"n must be at least 1, got {self.n}", param="n")
        if self.best_of is not None and self.best_of < self.n:
            raise InvalidRequestError(
                f"best_of ({self.best_of}) must be at least n ({self.n})", param="best_of"
            )
        if self.logprobs is not None and self.logprobs < 0:
            raise InvalidRequestError(
                f"logprobs must be >= 0, got {self.logprobs}", param="logprobs"
            )
        if self.max_tokens is not None and self.max_tokens < 0:
            raise InvalidRequestError(
                f"max_tokens must be >= 0, got {self.max_tokens}", param="max_tokens"
            )
        if self.prompt_logprobs is not None and self.prompt_logprobs < 0:
            raise InvalidRequestError(
                f"prompt_logprobs must be >= 0, got {self.prompt_logprobs}",
                param="prompt_logprobs",
            )
        keep = self.truncate_prompt_tokens
        if keep is not None and keep != -1 and keep < 1:
            raise InvalidRequestError(
                f"truncate_prompt_tokens must be -1 or at least 1, got {keep}",
                param="truncate_prompt_tokens",
            )
        if isinstance(self.seed, tuple) and len(self.seed) != self.n:
            raise InvalidRequestError(
                f"a seed list needs one seed per choice: {len(self.seed)} seeds for n={self.n}",
                param="seed",
            )
        if isinstance(self.seed, tuple) and self.best_of is not None and self.best_of > self.n:
            raise InvalidRequestError(
                f"a seed list sets one seed per returned choice, and best_of={self.best_of} "
                f"samples more candidates than n={self.n}: give one integer seed instead",
                param="seed",
            )

    @property
    def candidates(self) -> int:
        """Choices generated per prompt: ``best_of`` if given, else ``n``."""
        return self.best_of if self.best_of is not None else self.n
