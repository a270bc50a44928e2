"""The engine: requests in, domain results and stream events out.

``Engine.stream`` validates the request eagerly (raising :mod:`reference_engine.errors`
before any event), then returns a generator of events with the choices interleaved
round-robin; closing the generator stops generation at once. ``Engine.complete`` is the same
stream folded into a :class:`Completion`, so streamed and non-streamed results are equal by
construction. No state is kept between requests; one engine serves concurrent requests.

Seeds: an int ``seed`` gives candidate k of every prompt the seed ``seed + k``; a seed list
gives candidate k the k-th seed; no seed draws one per candidate from the OS. best_of ranks a
prompt's candidates by mean sampled-token logprob (ties: lower candidate first) and returns the
best ``n``; usage counts the returned choices' tokens.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator
from dataclasses import replace

from .artifacts import Artifacts, load
from .errors import ContextLengthError, InvalidRequestError, TokenIdOutOfRangeError
from .generation.choice import ChoiceRun, ChoiceSpec, Prompt
from .generation.utf8_filter import Utf8Filter, utf8_filters
from .request import GenerationRequest
from .results import (
    Choice,
    Completion,
    Event,
    FinishEvent,
    LogprobEntry,
    TextEvent,
    Usage,
    UsageEvent,
)
from .sampling import SamplingContext

MODEL_ID = "reference-ngram"
CONTEXT_LENGTH = 2048
_system_random = random.SystemRandom()


class Engine:
    """The reference engine over the shipped (or given) artifacts, loaded on first use."""

    model_id = MODEL_ID
    context_length = CONTEXT_LENGTH

    def __init__(self, artifacts: Artifacts | None = None) -> None:
        self._artifacts = artifacts

    @property
    def artifacts(self) -> Artifacts:
        if self._artifacts is None:
            self._artifacts = load()
        return self._artifacts

    def load(self) -> None:
        """Load the artifacts now (a server does it at start-up, not on the first request)."""
        _ = self.artifacts
        _ = self._filters
        _ = self.artifacts.model.sparse_tables  # ~50 ms: not in the first sampled request

    @property
    def tokenizer(self):  # type: ignore[no-untyped-def]
        return self.artifacts.tokenizer

    @property
    def vocab_size(self) -> int:
        return int(self.artifacts.tokenizer.vocab_size)

    @property
    def fingerprint(self) -> str:
        return self.artifacts.fingerprint

    @functools.cached_property
    def _token_bytes(self) -> tuple[bytes, ...]:
        tokenizer = self.tokenizer
        return tuple(tokenizer.token_bytes(i) for i in range(tokenizer.vocab_size))

    @functools.cached_property
    def _filters(self) -> tuple[Utf8Filter, ...]:
        tokenizer = self.tokenizer
        return utf8_filters(self._token_bytes, frozenset(tokenizer.special_tokens.values()))

    # -- validation and preparation ------------------------------------------------------

    def _check_ids(self, ids: tuple[int, ...] | list[int], param: str) -> None:
        vocab = self.vocab_size
        for token in ids:
            if not 0 <= token < vocab:
                raise TokenIdOutOfRangeError(
                    f"{param} holds token id {token}, outside the vocabulary (0..{vocab - 1})",
                    param=param,
                )

    def _prompt(self, raw: str | tuple[int, ...], field: str) -> Prompt:
        tokenizer = self.tokenizer
        if isinstance(raw, str):
            return Prompt(tuple(tokenizer.encode(raw)), raw)
        self._check_ids(raw, field)
        return Prompt(tuple(raw), tokenizer.decode(list(raw)))

    def _seeds(self, request: GenerationRequest) -> list[int]:
        count = request.candidates
        if isinstance(request.seed, tuple):
            return list(request.seed)
        if isinstance(request.seed, int):
            return [request.seed + k for k in range(count)]
        return [_system_random.getrandbits(63) for _ in range(count)]

    def _check_forced(self, request: GenerationRequest, eos_ids: frozenset[int]) -> None:
        """Forced tokens must themselves be a valid start of the output response_format asks
        for (the grammar would otherwise have no state to continue from)."""
        ctx = SamplingContext(request.sampling, prompt_ids=(), token_bytes=self._token_bytes,
                              eos_ids=eos_ids, special_ids=self.tokenizer.special_tokens.values())
        for position, token in enumerate(request.forced_output_tokens):
            filter_ = ctx.token_filter()
            if filter_ is not None and not filter_(token):
                data = self._token_bytes[token]
                raise InvalidRequestError(
                    f"forced_output_tokens[{position}] ({data!r}) cannot continue the output "
                    f"response_format {request.sampling.response_format} asks for",
                    param="forced_output_tokens",
                )
            ctx = ctx.advance(token)

    def _max_new(self, request: GenerationRequest, prompt: Prompt, index: int) -> int:
        length = len(prompt.ids)
        param = request.prompt_field
        if length > self.context_length:
            raise ContextLengthError(
                f"prompt {index} has {length} tokens; the context length is {self.context_length}",
                param=param,
            )
        if request.max_total_tokens is not None:
            limit = request.max_total_tokens - length
            if limit < 0:
                raise ContextLengthError(
                    f"max_total_tokens ({request.max_total_tokens}) is below the prompt's "
                    f"{length} tokens",
                    param="max_total_tokens",
                )
            return min(limit, self.context_length - length)
        if request.max_tokens is None:
            return self.context_length - length
        if length + request.max_tokens > self.context_length:
            raise ContextLengthError(
                f"this model's maximum context length is {self.context_length} tokens; prompt "
                f"{index} has {length} and max_tokens asks for {request.max_tokens}",
                param="max_tokens",
            )
        return request.max_tokens

    def _specs(self, request: GenerationRequest) -> list[list[ChoiceSpec]]:
        """Per prompt, its candidates' specs (validated)."""
        params = request.sampling
        self._check_ids(list(params.logit_bias), "logit_bias")
        for sequence in params.bad_word_tokens:
            self._check_ids(sequence, "bad_word_tokens")
        for sequence in request.stop_token_sequences:
            self._check_ids(sequence, "stop_tokens")
        self._check_ids(request.eos_token_ids, "eos_token")
        self._check_ids(request.forced_output_tokens, "forced_output_tokens")
        tokenizer = self.tokenizer
        eos_ids = frozenset({tokenizer.eot_id, *request.eos_token_ids})
        if params.constrained and request.forced_output_tokens:
            self._check_forced(request, eos_ids)
        bad_words = tuple(tuple(tokenizer.encode(word)) for word in request.bad_words if word)
        if bad_words:
            params = replace(params, bad_word_tokens=params.bad_word_tokens + bad_words)
        seeds = self._seeds(request)
        per_prompt = []
        for p, raw in enumerate(request.prompts):
            prompt = self._prompt(raw, request.prompt_field)
            max_new = self._max_new(request, prompt, p)
            prompt_params = params
            if request.min_total_tokens is not None:
                minimum = max(0, request.min_total_tokens - len(prompt.ids))
                prompt_params = replace(params, min_tokens=minimum)
            per_prompt.append([
                ChoiceSpec(
                    index=p * request.candidates + k,
                    prompt=prompt,
                    params=prompt_params,
                    seed=seeds[k],
                    max_new_tokens=max_new,
                    stop=request.stop,
                    stop_sequences=request.stop_token_sequences,
                    eos_ids=eos_ids,
                    logprobs=request.logprobs,
                    echo=request.echo,
                    forced=request.forced_output_tokens,
                )
                for k in range(request.candidates)
            ])
        return per_prompt

    def _run(self, spec: ChoiceSpec) -> ChoiceRun:
        return ChoiceRun(spec, tokenizer=self.tokenizer, model=self.artifacts.model,
                         utf8=self._filters, token_bytes=self._token_bytes)

    # -- the two entry points -------------------------------------------------------------

    def stream(self, request: GenerationRequest) -> Iterator[Event]:
        """Validate, then return the event generator (see the module docstring)."""
        if request.best_of is not None and request.best_of > 1:
            raise InvalidRequestError("best_of greater than 1 cannot be streamed", param="best_of")
        per_prompt = self._specs(request)
        runs = [self._run(spec) for specs in per_prompt for spec in specs]
        prompt_tokens = sum(len(specs[0].prompt.ids) for specs in per_prompt)
        return self._interleave(runs, prompt_tokens)

    def _interleave(self, runs: list[ChoiceRun], prompt_tokens: int) -> Iterator[Event]:
        active = [run.events() for run in runs]
        completion_tokens = 0
        try:
            while active:
                still = []
                for events in active:
                    event = next(events, None)
                    if event is None:
                        continue
                    if isinstance(event, FinishEvent):
                        completion_tokens += event.completion_tokens
                    yield event
                    still.append(events)
                active = still
        finally:
            for events in active:
                events.close()
        yield UsageEvent(Usage(prompt_tokens, completion_tokens))

    def complete(self, request: GenerationRequest) -> Completion:
        """Generate the whole completion (best_of included)."""
        per_prompt = self._specs(request)
        choices: list[Choice] = []
        prompt_tokens = 0
        for p, specs in enumerate(per_prompt):
            prompt_tokens += len(specs[0].prompt.ids)
            candidates = []
            for spec in specs:
                run = self._run(spec)
                choice = _fold(run.events(), with_logprobs=request.logprobs is not None)
                candidates.append((choice, run.mean_logprob))
            if request.best_of is not None and request.best_of > request.n:
                # Best first; sorted() is stable, so ties keep the lower candidate first.
                ranked = sorted(range(len(candidates)), key=lambda k: -candidates[k][1])
                chosen = ranked[: request.n]
            else:
                chosen = list(range(request.n))
            for k, candidate_index in enumerate(chosen):
                choice = candidates[candidate_index][0]
                choices.append(replace(choice, index=p * request.n + k))
        usage = Usage(prompt_tokens, sum(c.completion_tokens for c in choices))
        return Completion(tuple(choices), usage)


def _fold(events: Iterator[TextEvent | FinishEvent], *, with_logprobs: bool) -> Choice:
    """One choice's events joined into the non-streamed choice."""
    texts: list[str] = []
    entries: list[LogprobEntry] = []
    for event in events:
        texts.append(event.text)
        entries.extend(event.logprobs)
        if isinstance(event, FinishEvent):
            return Choice(
                index=event.index,
                text="".join(texts),
                finish_reason=event.finish_reason,
                logprobs=tuple(entries) if with_logprobs else None,
                token_ids=event.token_ids,
                seed=event.seed,
                completion_tokens=event.completion_tokens,
            )
    raise RuntimeError("a choice ended without a FinishEvent")
