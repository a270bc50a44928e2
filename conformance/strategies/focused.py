"""Requests aimed at deviations a random request seldom shows: stop strings and n samples.

:func:`~conformance.strategies.completion_requests` draws every dimension independently, so a
stop string that occurs in the answer, or ``n > 1`` sampled at temperature 1 with a seed, comes
up in a few draws out of hundreds. These strategies draw exactly those shapes:

* :func:`stop_requests`: a known prompt (one whose answer the caller has seen) with stop
  strings taken from that answer, streamed or not, echo off, so a stop string does occur, in
  the generated text or in a leaked prompt;
* :func:`repeat_bans`: the known prompt, greedy, with ``no_repeat_ngram`` 2 or 3 (FriendliAI):
  greedy answers loop, so a server that ignores the ban repeats an n-gram;
* :func:`scored_echoes`: ``echo`` with ``logprobs`` on a text prompt, not streamed, where
  the prompt's tokens must be scored (four fields a random draw seldom sets together);
* :func:`independent_samples`: ``n`` >= 2 choices at temperature 1 (seeded three times in
  four, with logprobs when claimed, so their chance of coinciding can be read), where a server
  that gives every choice the same seed returns n copies.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

import spec

from .requests import (
    JSON,
    check_count,
    check_profile,
    prompt_texts,
    stop_pieces,
    stop_sequences,
)

SEEDS = st.integers(0, 2**31 - 1)


def _valid(profile: spec.Profile, strategy: st.SearchStrategy[dict[str, JSON]]
           ) -> st.SearchStrategy[dict[str, JSON]]:
    validator = profile.validator("request")
    return strategy.filter(lambda body: validator.is_valid(body)
                           and not spec.cross_field_violations(body, profile.name))


def stop_requests(profile: spec.Profile, *, model: str = "reference-ngram",
                  max_tokens: int = 16, texts: Sequence[str] = (), prompt: JSON = None,
                  prompt_field: str = "prompt") -> st.SearchStrategy[dict[str, JSON]]:
    """Greedy requests with stop strings: ``prompt`` (under ``prompt_field``: FriendliAI's is
    ``tokens`` for ids) three times in four, else a drawn text, and stop strings taken from
    ``texts`` (what the server wrote for ``prompt``) or the fixed ones; streamed three times in
    four (the overlay of :func:`completion_requests` draws non-streamed stops often enough)."""
    check_profile(profile)
    check_count("max_tokens", max_tokens)
    stop_pieces(texts)
    if prompt_field not in ("prompt", "tokens"):
        raise ValueError(f"prompt_field={prompt_field!r} must be 'prompt' or 'tokens'")
    known = prompt is not None and prompt_field in profile.request_fields

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, JSON]:
        body: dict[str, JSON] = {"model": model, "max_tokens": max_tokens, "temperature": 0}
        if known and draw(st.integers(0, 3)):
            body[prompt_field] = prompt
        else:
            body["prompt"] = draw(prompt_texts())
        body["stop"] = draw(stop_sequences(profile, texts=texts))
        if draw(st.integers(0, 3)):  # streams three times in four: what they leak is the aim
            body["stream"] = True
        return body

    if not profile.claims("stop") or "stop" not in profile.request_fields:
        return st.nothing()
    return _valid(profile, build())


def repeat_bans(profile: spec.Profile, *, model: str = "reference-ngram",
                max_tokens: int = 16, prompt: JSON = None, prompt_field: str = "prompt"
                ) -> st.SearchStrategy[dict[str, JSON]]:
    """Greedy requests with ``no_repeat_ngram`` 2 or 3 on ``prompt`` (three times in four) or a
    drawn text; nothing when the profile does not claim ``no_repeat_ngram``."""
    check_profile(profile)
    check_count("max_tokens", max_tokens)
    if not profile.claims("no_repeat_ngram") or "no_repeat_ngram" not in profile.request_fields:
        return st.nothing()
    known = prompt is not None and prompt_field in profile.request_fields

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, JSON]:
        body: dict[str, JSON] = {"model": model, "max_tokens": max_tokens, "temperature": 0,
                                 "no_repeat_ngram": draw(st.integers(2, 3))}
        if known and draw(st.integers(0, 3)):
            body[prompt_field] = prompt
        else:
            body["prompt"] = draw(prompt_texts())
        return body

    return _valid(profile, build())


def scored_echoes(profile: spec.Profile, *, model: str = "reference-ngram",
                  max_tokens: int = 16) -> st.SearchStrategy[dict[str, JSON]]:
    """Non-streamed ``echo`` with ``logprobs`` 0 to 2 on a drawn text prompt; nothing when the
    profile does not claim ``echo_logprobs``."""
    check_profile(profile)
    check_count("max_tokens", max_tokens)
    if not all(profile.claims(name) for name in ("echo", "logprobs", "echo_logprobs")):
        return st.nothing()
    lowest = 0 if profile.claims("max_tokens_zero") else 1
    return _valid(profile, st.fixed_dictionaries({
        "model": st.just(model), "prompt": prompt_texts(), "echo": st.just(True),
        "logprobs": st.integers(0, 2), "max_tokens": st.integers(lowest, max_tokens),
    }))


def independent_samples(profile: spec.Profile, *, model: str = "reference-ngram",
                        max_tokens: int = 16, max_n: int = 2
                        ) -> st.SearchStrategy[dict[str, JSON]]:
    """Non-streamed ``n`` >= 2 at temperature 1 on a drawn text prompt, seeded three times in
    four (when ``seed`` is claimed) and with ``logprobs`` 0 or 1 (when claimed); nothing when
    the profile does not claim ``n`` or ``max_n`` < 2."""
    check_profile(profile)
    check_count("max_tokens", max_tokens)
    check_count("max_n", max_n)
    if max_n < 2 or not profile.claims("n") or "n" not in profile.request_fields:
        return st.nothing()

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, JSON]:
        body: dict[str, JSON] = {"model": model, "prompt": draw(prompt_texts()),
                                 "max_tokens": max_tokens, "n": draw(st.integers(2, max_n)),
                                 "temperature": 1.0}
        if profile.claims("seed") and draw(st.integers(0, 3)):
            body["seed"] = draw(SEEDS)
        if profile.claims("logprobs"):
            body["logprobs"] = draw(st.integers(0, 1))
        return body

    return _valid(profile, build())
