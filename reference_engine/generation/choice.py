"""One choice, token by token: sample, stop, decode, and attach logprobs.

A :class:`ChoiceRun` yields the events of one choice (see ``reference_engine.results``): the
echoed prompt first (when asked), one ``TextEvent`` per sampled token, then one
``FinishEvent``. Its order of work per step is the package's layering (``generation``): the
token-level stop matcher, the UTF-8 decoder, the text-level stop matcher, then logprob entries
are released with the first character they produced.

Usage counts every sampled token, including an end-of-text token and the tokens of a stop
sequence or stop string, which produce no text. A logprob entry exists for every token that
reached the decoder and whose first character is part of the returned text: a token that
straddles the start of a stop string keeps its entry (so the text is a prefix of the joined
tokens), tokens wholly inside the stop string have none, and neither has an end-of-text token.

vLLM's extensions live here too: ``stop_token_ids`` end the choice like end-of-text (the
engine puts them among ``eos_ids``, so ``min_tokens`` holds them off as well) and become its
``stop_reason``, as does a matched stop string; with ``include_stop_str_in_output`` the stop
string, or the stop token's text, stays in the output (and its tokens keep their logprob
entries); ``tokens_as_ids`` names tokens ``token_id:N`` in logprobs; and
:meth:`ChoiceRun.prompt_logprobs` ranks every prompt token (``prompt_logprobs``).
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Generator, Sequence
from dataclasses import dataclass

import numpy as np

from ..model.sparse import SparseLogprobs
from ..results import (
    FinishEvent,
    FinishReason,
    LogprobEntry,
    PromptLogprobs,
    RankedLogprob,
    StopReason,
    TextEvent,
)
from ..sampling import (
    NoAllowedTokenError,
    SamplingContext,
    SamplingParams,
    SeededRng,
    TokenFilter,
    finite_logprob,
    process_logits,
    sample,
    top_logprobs,
)
from ..sampling.fast_draw import sample_sparse, sparse_path
from ..tokenizer import IncrementalDecoder, Tokenizer
from .text_stops import TextStopMatcher
from .token_stops import TokenStopMatcher
from .utf8_filter import AllOf, Utf8Filter


@functools.lru_cache(maxsize=4)
def _display_table(tokenizer: Tokenizer) -> tuple[str, ...]:
    """Every token's display string, by id (built once per tokenizer)."""
    return tuple(tokenizer.token_display(i) for i in range(tokenizer.vocab_size))


@functools.lru_cache(maxsize=4)
def _id_table(vocab_size: int) -> tuple[str, ...]:
    """Every token named by its id, vLLM's ``return_tokens_as_token_ids`` form."""
    return tuple(f"token_id:{i}" for i in range(vocab_size))


def _processed(view: SparseLogprobs, ctx: SamplingContext) -> np.ndarray:
    """``process_logits`` over a sparse view's dense array (the exact path's input)."""
    return process_logits(view.dense(), ctx)


def _static_context(params: SamplingParams) -> bool:
    """Whether the loop may keep the first :class:`SamplingContext` (see ``events``)."""
    return not params.has_logit_processors


@dataclass(frozen=True)
class Prompt:
    """A tokenized prompt and the text it stands for (echoed verbatim).

    ``ids`` are the tokens the model sees: under vLLM's ``truncate_prompt_tokens`` only the
    last ones, while ``text`` stays the prompt as sent, and ``kept_from`` is where the kept
    tokens' text starts in it (0 when nothing was cut), so echoed prompt tokens carry their
    place in the echoed text as ``text_offset``.
    """

    ids: tuple[int, ...]
    text: str
    kept_from: int = 0


@dataclass(frozen=True)
class ChoiceSpec:
    """Everything that determines one choice's output."""

    index: int
    prompt: Prompt
    params: SamplingParams
    seed: int
    max_new_tokens: int
    stop: tuple[str, ...]
    stop_sequences: tuple[tuple[int, ...], ...]
    eos_ids: frozenset[int]
    logprobs: int | None
    echo: bool
    forced: tuple[int, ...]
    stop_token_ids: frozenset[int] = frozenset()
    """vLLM's stop tokens (also in ``eos_ids``): they set the choice's ``stop_reason``."""
    include_stop: bool = False
    tokens_as_ids: bool = False


class ChoiceRun:
    """Generates one choice; iterate :meth:`events` once."""

    def __init__(self, spec: ChoiceSpec, *, tokenizer: Tokenizer, model: object,
                 utf8: tuple[Utf8Filter, ...], token_bytes: Sequence[bytes]) -> None:
        self.spec = spec
        self._tokenizer = tokenizer
        self._model = model
        self._utf8 = utf8
        self._token_bytes = token_bytes
        self.logprob_sum = 0.0
        self.sampled = 0
        self._display = (_id_table(tokenizer.vocab_size) if spec.tokens_as_ids
                         else _display_table(tokenizer))

    @property
    def mean_logprob(self) -> float:
        """Mean logprob of the sampled tokens (best_of ranks candidates by it)."""
        return self.logprob_sum / self.sampled if self.sampled else 0.0

    def _top(self, processed: np.ndarray, token: int) -> dict[str, float]:
        k = self.spec.logprobs or 0
        return self._top_of(top_logprobs(processed, k), token, float(processed[token]))

    def _top_of(self, best: list[tuple[int, float]], token: int, value: float
                ) -> dict[str, float]:
        """The top-logprobs entry: the ``best`` pairs, then the sampled token if absent."""
        display = self._display
        top = {display[t]: finite_logprob(v) for t, v in best}
        top.setdefault(display[token], finite_logprob(value))
        return top

    def prompt_entries(self) -> tuple[LogprobEntry, ...]:
        """Logprob entries of the prompt tokens: the model's own, the first one null."""
        ids = self.spec.prompt.ids
        decoder = IncrementalDecoder(self._tokenizer)
        entries: list[LogprobEntry] = []
        chars = self.spec.prompt.kept_from
        context = [self._tokenizer.eot_id]
        for position, token in enumerate(ids):
            display = self._display[token]
            if position == 0:
                entries.append(LogprobEntry(display, None, None, chars))
            else:
                logprobs = self._model.logprobs(context)  # type: ignore[attr-defined]
                entries.append(LogprobEntry(display, finite_logprob(logprobs[token]),
                                            self._top(logprobs, token), chars))
            chars += len(decoder.push(token))
            context.append(token)
        return tuple(entries)

    def prompt_logprobs(self, top: int) -> PromptLogprobs:
        """vLLM's ``prompt_logprobs``: None for the first prompt token, then the model's
        logprob of each prompt token given the ones before, with its rank, followed by the
        ``top`` most likely tokens there (the prompt token once, wherever it ranks)."""
        ids = self.spec.prompt.ids
        tokenizer = self._tokenizer
        positions: list[tuple[RankedLogprob, ...] | None] = []
        context = [tokenizer.eot_id]
        for position, token in enumerate(ids):
            if position == 0:
                positions.append(None)
            else:
                logprobs = self._model.logprobs(context)  # type: ignore[attr-defined]
                ranked = [self._ranked(logprobs, token)]
                ranked.extend(self._ranked(logprobs, t) for t, _ in top_logprobs(logprobs, top)
                              if t != token)
                positions.append(tuple(ranked))
            context.append(token)
        return tuple(positions)

    def _ranked(self, logprobs: np.ndarray, token: int) -> RankedLogprob:
        value = float(logprobs[token])
        rank = int(np.count_nonzero(logprobs > value)) + 1
        return RankedLogprob(token, finite_logprob(value), rank,
                             self._tokenizer.decode([token]))

    def events(self) -> Generator[TextEvent | FinishEvent, None, None]:
        spec = self.spec
        tokenizer = self._tokenizer
        want_logprobs = spec.logprobs is not None
        base = len(spec.prompt.text)
        if spec.echo:
            entries = self.prompt_entries() if want_logprobs else ()
            yield TextEvent(spec.index, spec.prompt.text, None, entries)

        model = self._model
        order = model.order  # type: ignore[attr-defined]
        history = [tokenizer.eot_id, *spec.prompt.ids]
        ctx = SamplingContext(spec.params, prompt_ids=spec.prompt.ids,
                              token_bytes=self._token_bytes, eos_ids=spec.eos_ids,
                              special_ids=tokenizer.special_tokens.values())
        rng = SeededRng(spec.seed)
        decoder = IncrementalDecoder(tokenizer)
        token_stops = TokenStopMatcher(spec.stop_sequences)
        text_stops = TextStopMatcher(spec.stop, include=spec.include_stop)
        kept_stops = spec.stop_token_ids if spec.include_stop else frozenset()
        stop_reason: StopReason = None
        text_stops.active = spec.params.min_tokens == 0
        held_info: deque[tuple[float, dict[str, float] | None]] = deque()
        unreleased: deque[tuple[int, LogprobEntry]] = deque()
        chars = 0
        waiting = 0
        sampled: list[int] = []
        display = self._display if want_logprobs else ()

        push_bytes = decoder.push_bytes
        token_bytes = self._token_bytes

        def decode(token: int, info: tuple[float, dict[str, float] | None]) -> str:
            nonlocal chars
            delta = push_bytes(token_bytes[token])
            if want_logprobs:
                entry = LogprobEntry(display[token], info[0], info[1], base + chars)
                unreleased.append((chars, entry))
            chars += len(delta)
            return delta

        def release(limit: int) -> tuple[LogprobEntry, ...]:
            if not unreleased:
                return ()
            out = []
            while unreleased and unreleased[0][0] < limit:
                out.append(unreleased.popleft()[1])
            return tuple(out)

        reason: FinishReason = "length"
        cut_by_stop_string = False
        # Without history-based processors (penalties, bans, response_format) the context is read
        # for ``num_generated < min_tokens`` only, and ``process_logits`` gives the same array
        # for every step on the same side of ``min_tokens``: the first context serves them
        # all, and is never advanced.
        static_ctx = _static_context(spec.params)
        # A response_format grammar accepts UTF-8 text only (see sampling.grammar), so it
        # already rejects whatever the UTF-8 filter would and is the only filter; the
        # end-of-text ids (allowed where the grammar accepts) must pass that filter as such.
        grammar_alone = (ctx.grammar_state is not None
                         and all(self._utf8[0](token) for token in spec.eos_ids))
        forced = spec.forced
        params = spec.params
        utf8_filters = self._utf8
        sparse_steps = static_ctx and sparse_path(params) and hasattr(model, "sparse_logprobs")
        eos_banned = tuple(ctx.eos_array.tolist())  # what process_logits bans before min_tokens
        top_k = spec.logprobs or 0
        while len(sampled) < spec.max_new_tokens:
            context = history[-(order - 1):] if order > 1 else ()
            step = len(sampled)
            if sparse_steps and step >= len(forced):
                # The model's sparse view instead of its dense array (``sparse_step``): the
                # same token, logprob and top logprobs, bit for bit. Before ``min_tokens``
                # end-of-text is banned, which the draw steps over (``sample_sparse``).
                view = model.sparse_logprobs(context)  # type: ignore[attr-defined]
                banned = eos_banned if step < params.min_tokens else ()
                exact = functools.partial(_processed, view, ctx) if banned else None
                try:
                    token, value = sample_sparse(view, params, rng,
                                                 allowed=utf8_filters[waiting],
                                                 banned=banned, processed=exact)
                except NoAllowedTokenError:
                    reason = "stop"
                    break
                logprob = finite_logprob(value)
                self.logprob_sum += logprob
                self.sampled += 1
                sampled.append(token)
                history.append(token)
                if token in spec.eos_ids and token not in kept_stops:
                    reason = "stop"
                    stop_reason = token if token in spec.stop_token_ids else None
                    break
                waiting = utf8_filters[waiting].after[token]
                # Top logprobs from the view (the same bits as the dense array's), or, with
                # end-of-text banned, from process_logits' array.
                held_info.append((logprob, self._top_of(
                    view.top(top_k) if exact is None else top_logprobs(exact(), top_k),
                    token, value) if want_logprobs else None))
            else:
                logprobs = model.logprobs(context)  # type: ignore[attr-defined]
                try:
                    if static_ctx and step >= params.min_tokens:
                        processed = logprobs  # process_logits' result, every processor off
                    else:
                        processed = process_logits(logprobs, ctx)
                    if step < len(forced):
                        token = forced[step]
                    elif static_ctx:  # no response_format grammar: no token filter but UTF-8's
                        token = sample(processed, params, rng, allowed=utf8_filters[waiting])
                    else:
                        grammar_filter = ctx.token_filter()
                        utf8 = utf8_filters[waiting]
                        allowed: TokenFilter
                        if grammar_filter is None:
                            allowed = utf8
                        elif grammar_alone:
                            allowed = grammar_filter
                        else:
                            allowed = AllOf(grammar_filter, utf8)
                        token = sample(processed, params, rng, allowed=allowed)
                except NoAllowedTokenError:
                    # The request's constraints leave no token at all (e.g. json_object needs
                    # "{" and eos_token lists it, so it is banned until the object is
                    # complete): the choice ends here, as a natural stop, rather than failing
                    # the request.
                    reason = "stop"
                    break
                logprob = finite_logprob(processed[token])
                self.logprob_sum += logprob
                self.sampled += 1
                sampled.append(token)
                history.append(token)
                if not static_ctx:
                    ctx = ctx.advance(token)
                if token in spec.eos_ids and token not in kept_stops:
                    reason = "stop"
                    stop_reason = token if token in spec.stop_token_ids else None
                    break
                waiting = utf8_filters[waiting].after[token]
                held_info.append((logprob, self._top(processed, token) if want_logprobs
                                  else None))
            to_decode, matched = token_stops.push(token)
            if len(to_decode) == 1:  # the usual case: no stop sequence holds tokens back
                text = decode(to_decode[0], held_info.popleft())
            else:
                text = "".join(decode(t, held_info.popleft()) for t in to_decode)
            if len(sampled) >= spec.params.min_tokens:
                text_stops.active = True
            scan = text_stops.push(text)
            yield TextEvent(spec.index, scan.release, token, release(text_stops.released))
            if matched or scan.stopped:
                reason = "stop"
                cut_by_stop_string = scan.stopped
                stop_reason = text_stops.matched if scan.stopped else None
                break
            if token in kept_stops:  # a stop token whose text stays (include_stop)
                reason = "stop"
                stop_reason = token
                break

        tail = ""
        if not cut_by_stop_string:
            # Tokens held as a possible stop sequence are output after all.
            flushed = token_stops.flush()
            scan = text_stops.push("".join(decode(t, held_info.popleft()) for t in flushed))
            tail += scan.release
            if scan.stopped:
                reason = "stop"
                stop_reason = text_stops.matched
        tail += text_stops.finish()
        yield FinishEvent(spec.index, reason, tail, release(len(text_stops.text)), spec.seed,
                          tuple(sampled), len(sampled), stop_reason)
