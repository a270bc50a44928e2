"""The engine: requests in, domain results and stream events out.

``Engine.stream`` validates the request eagerly (raising :mod:`reference_engine.errors`
before any event), then returns a generator of events with the choices interleaved
round-robin; closing the generator stops generation at once. ``Engine.complete`` is the same
stream folded into a :class:`Completion`, so streamed and non-streamed results are equal by
construction. ``Engine.complete_prompts`` hands the same completion over prompt by prompt,
each part final (its choices' indices, the request's seeds, errors naming its prompt), so a
caller can stop or render between prompts without knowing how indices or seeds are assigned;
``Engine.deterministic`` says whether a request's answer may be kept and given again. No state
is kept between requests; one engine serves concurrent requests.

Seeds: an int ``seed`` gives candidate k of every prompt the seed ``seed + k``; a seed list
gives candidate k the k-th seed; no seed draws one per candidate from the OS. best_of ranks a
prompt's candidates by mean sampled-token logprob (ties: lower candidate first) and returns the
best ``n``; usage counts the returned choices' tokens.

vLLM's extensions: ``ignore_eos`` takes end-of-text out of ``eos_ids`` and bans it (one
always-banned token, the ``bad_word_tokens`` mechanism), so a choice runs to ``max_tokens`` or
a stop; ``stop_token_ids`` join ``eos_ids`` (``min_tokens`` holds them off too); the rest is
per choice (``generation.choice``) or per prompt (``prompt_logprobs``, computed once for a
prompt's choices and never streamed). ``allowed_token_ids`` is a sampling parameter
(``sampling.allowed_tokens``); its ids are checked against the vocabulary here, with vLLM's
message. ``truncate_prompt_tokens`` applies where prompts are tokenized (``_prompt``): each
prompt keeps its last N tokens, and everything downstream (generation, the context-length
check, ``usage.prompt_tokens``, ``prompt_logprobs``, the echoed prompt's logprob entries)
sees the kept tokens; vLLM's limit and -1 are resolved once per request
(``_kept_prompt_tokens``, after vLLM's ``TokenizeParams``: at most ``max_model_len -
max_tokens``, which -1 means). Echo returns the prompt as sent, as vLLM does (its renderer
keeps a text prompt's ``prompt`` through tokenization, and decodes a token prompt before
cutting it): the echoed prompt's logprob entries are the kept tokens' only, each at its place
in the echoed text, and ``text_offset`` counts from the start of the prompt as sent.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator
from dataclasses import dataclass, replace

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
    VllmChoice,
)
from .sampling import SamplingContext, SamplingParams
from .sampling.allowed_tokens import OUT_OF_VOCAB_MESSAGE

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

    def _prompt(self, raw: str | tuple[int, ...], field: str, keep: int | None = None) -> Prompt:
        """The tokenized prompt; with ``keep`` (``truncate_prompt_tokens``), only its last
        ``keep`` tokens, its text still the prompt as sent (see the module docstring)."""
        tokenizer = self.tokenizer
        if isinstance(raw, str):
            ids, text = tuple(tokenizer.encode(raw)), raw
        else:
            self._check_ids(raw, field)
            ids, text = tuple(raw), tokenizer.decode(list(raw))
        if keep is None or len(ids) <= keep:
            return Prompt(ids, text)
        kept = ids[len(ids) - keep:]
        kept_text = tokenizer.decode(list(kept))
        return Prompt(kept, text, max(0, len(text) - len(kept_text)))

    def _kept_prompt_tokens(self, request: GenerationRequest) -> int | None:
        """How many prompt tokens ``truncate_prompt_tokens`` keeps (None: all), as vLLM
        resolves it: -1 is what fits beside ``max_tokens``, and more than that is refused.
        When ``max_tokens`` alone exceeds the context, nothing is cut: ``_max_new`` refuses
        the request for ``max_tokens``, as vLLM does first."""
        keep = request.truncate_prompt_tokens
        if keep is None:
            return None
        max_input = self.context_length - (request.max_tokens or 0)
        if max_input < 0:
            return None
        if keep == -1:
            return max_input
        if keep > max_input:
            raise InvalidRequestError(
                f"truncate_prompt_tokens={keep} cannot be greater than max_model_len - "
                f"max_tokens = {max_input}. Please request a smaller truncation size.",
                param="truncate_prompt_tokens",
            )
        return keep

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

    def _plan(self, request: GenerationRequest) -> _Plan:
        """What every prompt's candidates share, validated; the seeds are drawn here, once
        for the whole request, so candidate k of every prompt gets the same seed."""
        params = request.sampling
        self._check_ids(list(params.logit_bias), "logit_bias")
        for sequence in params.bad_word_tokens:
            self._check_ids(sequence, "bad_word_tokens")
        for sequence in request.stop_token_sequences:
            self._check_ids(sequence, "stop_tokens")
        self._check_ids(request.eos_token_ids, "eos_token")
        self._check_ids(request.forced_output_tokens, "forced_output_tokens")
        self._check_ids(request.stop_token_ids, "stop_token_ids")
        allowed = params.allowed_token_ids
        if allowed is not None and allowed[-1] >= self.vocab_size:  # ascending: the max last
            raise TokenIdOutOfRangeError(
                f"{OUT_OF_VOCAB_MESSAGE} ({allowed[-1]} is outside 0..{self.vocab_size - 1})",
                param="allowed_token_ids",
            )
        tokenizer = self.tokenizer
        eot = () if request.ignore_eos else (tokenizer.eot_id,)
        eos_ids = frozenset({*eot, *request.eos_token_ids, *request.stop_token_ids})
        if request.ignore_eos:
            params = replace(params, bad_word_tokens=(*params.bad_word_tokens,
                                                      (tokenizer.eot_id,)))
        if params.constrained and request.forced_output_tokens:
            self._check_forced(request, eos_ids)
        bad_words = tuple(tuple(tokenizer.encode(word)) for word in request.bad_words if word)
        if bad_words:
            params = replace(params, bad_word_tokens=params.bad_word_tokens + bad_words)
        keep = self._kept_prompt_tokens(request)
        return _Plan(params, eos_ids, tuple(self._seeds(request)), keep)

    def _prompt_specs(self, request: GenerationRequest, plan: _Plan, p: int,
                      raw: str | tuple[int, ...]) -> list[ChoiceSpec]:
        """Prompt ``p``'s candidates' specs (validated: its errors name prompt ``p``)."""
        prompt = self._prompt(raw, request.prompt_field, plan.keep)
        max_new = self._max_new(request, prompt, p)
        prompt_params = plan.params
        if request.min_total_tokens is not None:
            minimum = max(0, request.min_total_tokens - len(prompt.ids))
            prompt_params = replace(plan.params, min_tokens=minimum)
        return [
            ChoiceSpec(
                index=p * request.candidates + k,
                prompt=prompt,
                params=prompt_params,
                seed=plan.seeds[k],
                max_new_tokens=max_new,
                stop=request.stop,
                stop_sequences=request.stop_token_sequences,
                eos_ids=plan.eos_ids,
                logprobs=request.logprobs,
                echo=request.echo,
                forced=request.forced_output_tokens,
                stop_token_ids=frozenset(request.stop_token_ids),
                include_stop=request.include_stop_str_in_output,
                tokens_as_ids=request.tokens_as_ids,
            )
            for k in range(request.candidates)
        ]

    def _specs(self, request: GenerationRequest) -> list[list[ChoiceSpec]]:
        """Per prompt, its candidates' specs (all validated before any is generated)."""
        plan = self._plan(request)
        return [self._prompt_specs(request, plan, p, raw) for p, raw in enumerate(request.prompts)]

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
        """Generate the whole completion (best_of included): :meth:`complete_prompts` joined."""
        return Completion.joined(self.complete_prompts(request))

    def complete_prompts(self, request: GenerationRequest) -> Iterator[Completion]:
        """The completion prompt by prompt: one :class:`Completion` per prompt, its choices
        numbered as in the whole answer (``p * n + k``) and its usage that prompt's.

        The request-wide checks run now; prompt ``p`` is tokenized, checked (its errors name
        ``p``) and generated only when its part is asked for, so a caller can stop between
        prompts, or render each part and let it go before the next exists. Joined with
        :meth:`Completion.joined`, the parts are :meth:`complete`'s result.
        """
        plan = self._plan(request)
        return self._prompt_parts(request, plan)

    def _prompt_parts(self, request: GenerationRequest, plan: _Plan) -> Iterator[Completion]:
        with_logprobs = request.logprobs is not None
        for p, raw in enumerate(request.prompts):
            specs = self._prompt_specs(request, plan, p, raw)
            candidates = []
            ranked = None
            if request.prompt_logprobs is not None and request.vllm_fields:
                ranked = self._run(specs[0]).prompt_logprobs(request.prompt_logprobs)
            for spec in specs:
                run = self._run(spec)
                choice = _fold(run.events(), with_logprobs=with_logprobs,
                               vllm=request.vllm_fields)
                if ranked is not None and isinstance(choice, VllmChoice):
                    choice = replace(choice, prompt_logprobs=ranked)
                candidates.append((choice, run.mean_logprob))
            if request.best_of is not None and request.best_of > request.n:
                # Best first; sorted() is stable, so ties keep the lower candidate first.
                best = sorted(range(len(candidates)), key=lambda k: -candidates[k][1])
                chosen = best[: request.n]
            else:
                chosen = list(range(request.n))
            choices = tuple(replace(candidates[c][0], index=p * request.n + k)
                            for k, c in enumerate(chosen))
            usage = Usage(len(specs[0].prompt.ids), sum(c.completion_tokens for c in choices))
            yield Completion(choices, usage)

    @staticmethod
    def deterministic(request: GenerationRequest) -> bool:
        """Whether the request's answer is a function of the request alone (so it may be kept
        and given again): seeded, or greedy (no random draw is made)."""
        return request.seed is not None or request.sampling.greedy


@dataclass(frozen=True)
class _Plan:
    """What :meth:`Engine._plan` settles for every prompt of a request."""

    params: SamplingParams
    eos_ids: frozenset[int]
    seeds: tuple[int, ...]
    keep: int | None = None
    """How many tokens of each prompt ``truncate_prompt_tokens`` keeps (None: all)."""


def _fold(events: Iterator[TextEvent | FinishEvent], *, with_logprobs: bool,
          vllm: bool = False) -> Choice:
    """One choice's events joined into the non-streamed choice (a :class:`VllmChoice`, which
    says what stopped it, when the request asked for vLLM's response fields)."""
    texts: list[str] = []
    entries: list[LogprobEntry] = []
    for event in events:
        texts.append(event.text)
        entries.extend(event.logprobs)
        if isinstance(event, FinishEvent):
            kind: type[Choice] = VllmChoice if vllm else Choice
            choice = kind(
                index=event.index,
                text="".join(texts),
                finish_reason=event.finish_reason,
                logprobs=tuple(entries) if with_logprobs else None,
                token_ids=event.token_ids,
                seed=event.seed,
                completion_tokens=event.completion_tokens,
            )
            if isinstance(choice, VllmChoice):
                choice = replace(choice, stop_reason=event.stop_reason)
            return choice
    raise RuntimeError("a choice ended without a FinishEvent")
