"""The engine's domain results and stream events; only the mock turns them into JSON.

A non-streamed request returns a :class:`Completion`. A streamed one yields events: one
:class:`TextEvent` per sampled token (and one for the echoed prompt), one :class:`FinishEvent`
per choice, and a final :class:`UsageEvent`. Joining every event's text per choice gives exactly
the non-streamed text, and joining their logprob entries gives exactly its logprobs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

FinishReason = Literal["stop", "length"]
StopReason = int | str | None
"""What stopped a choice (vLLM's ``stop_reason``): the stop token id, the stop string, or
None (end-of-text, a length limit, or a FriendliAI stop sequence)."""


@dataclass(frozen=True)
class LogprobEntry:
    """One token's line of the ``logprobs`` object.

    ``token`` uses the tokenizer's display form (``bytes:\\xNN`` for partial UTF-8);
    ``logprob`` and ``top`` are None for the first echoed prompt token; ``offset`` counts
    characters from the start of the prompt.
    """

    token: str
    logprob: float | None
    top: dict[str, float] | None
    offset: int


@dataclass(frozen=True)
class RankedLogprob:
    """One token at one prompt position (vLLM's ``prompt_logprobs`` entry): its logprob, its
    rank among the vocabulary (1: the most likely) and its text decoded alone."""

    token_id: int
    logprob: float
    rank: int
    decoded: str


PromptLogprobs = tuple[tuple[RankedLogprob, ...] | None, ...]
"""Per prompt token: None for the first, then the prompt token and the top alternatives."""


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class Choice:
    """One returned choice: ``index`` = prompt index * n + k."""

    index: int
    text: str
    finish_reason: FinishReason
    logprobs: tuple[LogprobEntry, ...] | None
    token_ids: tuple[int, ...]
    seed: int
    completion_tokens: int


@dataclass(frozen=True)
class VllmChoice(Choice):
    """A choice of a request that asked for vLLM's response fields
    (``GenerationRequest.vllm_fields``): what stopped it, and its prompt's logprobs if asked."""

    stop_reason: StopReason = None
    prompt_logprobs: PromptLogprobs | None = None


@dataclass(frozen=True)
class Completion:
    """A whole completion: the choices in index order and the request's usage."""

    choices: tuple[Choice, ...]
    usage: Usage

    @classmethod
    def joined(cls, parts: Iterable[Completion]) -> Completion:
        """One completion of several prompts' parts (``Engine.complete_prompts``): their
        choices in order, their usages summed."""
        choices: list[Choice] = []
        prompt_tokens = completion_tokens = 0
        for part in parts:
            choices.extend(part.choices)
            prompt_tokens += part.usage.prompt_tokens
            completion_tokens += part.usage.completion_tokens
        return cls(tuple(choices), Usage(prompt_tokens, completion_tokens))


@dataclass(frozen=True)
class TextEvent:
    """New text of choice ``index``; ``token_id`` is the sampled token (None for echo text)."""

    index: int
    text: str
    token_id: int | None
    logprobs: tuple[LogprobEntry, ...]


@dataclass(frozen=True)
class FinishEvent:
    """Choice ``index`` ended; ``text`` and ``logprobs`` hold whatever was still held back."""

    index: int
    finish_reason: FinishReason
    text: str
    logprobs: tuple[LogprobEntry, ...]
    seed: int
    token_ids: tuple[int, ...]
    completion_tokens: int
    stop_reason: StopReason = None


@dataclass(frozen=True)
class UsageEvent:
    """The last event of a stream: the request's usage."""

    usage: Usage


Event = TextEvent | FinishEvent | UsageEvent
