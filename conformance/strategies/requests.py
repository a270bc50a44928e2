"""Valid completion requests (see the package docstring).

Built valid by construction (cross-field rules included), then checked against the profile's
request schema and ``x-cross-field-rules`` as a safety net, so the final filter almost never
rejects a draw. Every dimension the contract couples is drawn independently: ``stream`` x ``n``
x prompt lists x ``echo`` x ``logprobs`` x ``stop`` x ``seed``, with the profile's other fields
(sampling knobs, FriendliAI's token-level fields) on top.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

import spec

JSON = Any
TOKEN_IDS = st.integers(0, 255)
"""Ids every byte-level (or byte-fallback) vocabulary of 256 tokens or more has."""

_TEXT_ALPHABET = st.characters(
    codec="utf-8", categories=("L", "N", "P", "S", "Zs"), exclude_characters="\x00"
)
_WORDS = ("The", " Python", " language", " is", " a", " list", " of", " values", "\n", " caf\u00e9",
          " \u65e5\u672c", " \U0001f600", ".", ",", " and", "<|endoftext|>")
_STOPS = (".", "\n", " the", ",", "e", "on", "\n\n", " is")


def check_profile(profile: spec.Profile) -> None:
    """Check ``profile``: a ``TypeError`` for anything but a :class:`spec.Profile` (a name
    or a file path included: resolve it once with :func:`spec.get_profile`), a ``ValueError``
    for one whose schemas cannot be looked up (neither shipped nor loaded)."""
    if isinstance(profile, str):
        raise TypeError(f"profile={profile!r} is a name or a path, not a spec.Profile; pass "
                        f"spec.get_profile({profile!r})")
    if not isinstance(profile, spec.Profile):
        raise TypeError(f"profile={profile!r} must be a spec.Profile (spec.get_profile(name))")
    try:  # its schemas are looked up by name: it must be shipped or loaded
        spec.get_profile(profile.name)
    except (KeyError, OSError, ValueError):
        raise ValueError(
            f"profile={profile.name!r} is a spec.Profile neither shipped nor loaded; "
            "build it with spec.get_profile or spec.load_profile"
        ) from None


def check_count(name: str, value: object, *, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name}={value!r} must be an integer >= {minimum}")
    return value


def prompt_texts(*, max_size: int = 24) -> st.SearchStrategy[str]:
    """Prompt strings: words with multi-byte characters and the end-of-text marker, or text."""
    words = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=6).map("".join)
    return st.one_of(words, st.text(_TEXT_ALPHABET, min_size=1, max_size=max_size))


def token_id_lists(*, max_size: int = 8) -> st.SearchStrategy[list[int]]:
    return st.lists(TOKEN_IDS, min_size=1, max_size=max_size)


def prompts(profile: spec.Profile, *, max_prompts: int = 3) -> st.SearchStrategy[JSON]:
    """A ``prompt`` value the profile accepts: text, a list of texts, or token ids."""
    check_profile(profile)
    check_count("max_prompts", max_prompts)
    options: list[st.SearchStrategy[JSON]] = [prompt_texts()]
    if profile.claims("prompt_lists"):
        options.append(st.lists(prompt_texts(), min_size=1, max_size=max_prompts))
    if profile.claims("token_prompts"):
        options.append(token_id_lists())
        options.append(st.lists(token_id_lists(), min_size=1, max_size=max_prompts))
    return st.one_of(options)


def stop_pieces(texts: Sequence[str]) -> tuple[str, ...]:
    """Stop strings taken from ``texts`` (what a server wrote): each word with its leading
    space, each non-space character, and each word's first half, in order of appearance."""
    found: dict[str, None] = {}
    for text in texts:
        if not isinstance(text, str):
            raise ValueError(f"texts must hold strings, got {text!r}")
        for word in re.findall(r"\s*\S+", text):
            found[word] = None
            core = word.lstrip()
            if len(core) > 3:
                found[word[: len(word) - len(core) // 2]] = None
        for char in text:
            if not char.isspace():
                found[char] = None
    return tuple(found)


def stop_sequences(profile: spec.Profile, *, texts: Sequence[str] = ()
                   ) -> st.SearchStrategy[JSON]:
    """A ``stop`` value: one string or up to the profile's limit (FriendliAI: a list only).

    ``texts`` (text the server produced, e.g. a greedy answer) adds stop strings taken from it
    (:func:`stop_pieces`), drawn three times in four: fixed strings may never occur in what a
    model writes, and then no stop string is ever matched."""
    check_profile(profile)
    limit = profile.limits.get("stop") or 4
    strings: st.SearchStrategy[str] = st.sampled_from(_STOPS)
    pieces = stop_pieces(texts)
    if pieces:
        strings = st.integers(0, 3).flatmap(
            lambda pick: st.sampled_from(pieces) if pick else st.sampled_from(_STOPS))
    as_list = st.lists(strings, min_size=1, max_size=limit, unique=True)
    if profile.wire == "friendli":
        return as_list
    return st.one_of(strings, as_list)


def _sampling(fields: set[str]) -> dict[str, st.SearchStrategy[JSON]]:
    """The sampling knobs the profile has, each with its boundary values and ``null``."""
    knobs: dict[str, st.SearchStrategy[JSON]] = {
        "temperature": st.sampled_from([0, 0.0, 0.5, 1.0, 1.5, 2.0, None]),
        "top_p": st.sampled_from([0.1, 0.5, 0.9, 1.0, None]),
        "presence_penalty": st.sampled_from([-2.0, -1.0, 0.0, 0.5, 2.0, None]),
        "frequency_penalty": st.sampled_from([-2.0, -1.0, 0.0, 0.5, 2.0, None]),
        "top_k": st.sampled_from([0, 1, 5, 50, None]),
        "min_p": st.sampled_from([0.0, 0.05, 0.5, None]),
        "repetition_penalty": st.sampled_from([0.5, 1.0, 1.2, 2.0, None]),
        "user": st.just("conformance"),
        "suffix": st.sampled_from(["", " end.", None]),
        "no_repeat_ngram": st.integers(1, 4),
        "xtc_threshold": st.sampled_from([0.0, 0.1, 0.5]),
        "xtc_probability": st.sampled_from([0.0, 0.5, 1.0]),
    }
    return {name: strategy for name, strategy in knobs.items() if name in fields}


def _friendli_tokens(fields: set[str]) -> dict[str, st.SearchStrategy[JSON]]:
    """FriendliAI's token-level fields: banned words and tokens, stop and end tokens."""
    sequences = st.lists(st.fixed_dictionaries({"tokens": token_id_lists(max_size=3)}),
                         min_size=1, max_size=2)
    knobs: dict[str, st.SearchStrategy[JSON]] = {
        "bad_words": st.lists(st.sampled_from([" the", "e", ".", " Python"]), min_size=1,
                              max_size=2, unique=True),
        "bad_word_tokens": sequences,
        "stop_tokens": sequences,
        "eos_token": st.lists(TOKEN_IDS, min_size=1, max_size=2),
    }
    return {name: strategy for name, strategy in knobs.items() if name in fields}


_ABSENT = object()


def _maybe(draw: st.DrawFn, strategy: st.SearchStrategy[JSON]) -> JSON:
    return draw(st.one_of(st.just(_ABSENT), strategy))


@st.composite
def _build(draw: st.DrawFn, profile: spec.Profile, model: str, max_tokens: int, max_n: int,
           max_prompts: int, stream: bool | None, texts: tuple[str, ...] = ()
           ) -> dict[str, JSON]:
    fields = set(profile.request_fields)
    body: dict[str, JSON] = {"model": model}
    if "tokens" in fields and profile.claims("tokens_prompt") and draw(st.booleans()):
        body["tokens"] = draw(token_id_lists())
    else:
        body["prompt"] = draw(prompts(profile, max_prompts=max_prompts))
    lowest = 0 if profile.claims("max_tokens_zero") else 1
    body["max_tokens"] = draw(st.integers(lowest, max_tokens))
    streaming = draw(st.booleans()) if stream is None else stream
    if streaming or draw(st.booleans()):
        body["stream"] = streaming
    if streaming and profile.claims("include_usage") and draw(st.booleans()):
        body["stream_options"] = draw(st.sampled_from(
            [{}, {"include_usage": True}, {"include_usage": False}, {"include_usage": None}]))
    n = 1
    if profile.claims("n") and "n" in fields and draw(st.booleans()):
        n = body["n"] = draw(st.integers(1, max_n))
    if profile.claims("logprobs") and "logprobs" in fields:
        value = _maybe(draw, st.integers(0, min(5, profile.limits.get("logprobs") or 5)))
        if value is not _ABSENT:
            body["logprobs"] = value
    if profile.claims("echo") and "echo" in fields:
        value = _maybe(draw, st.booleans())
        if value is not _ABSENT:
            body["echo"] = value
    if profile.claims("stop") and "stop" in fields:
        value = _maybe(draw, stop_sequences(profile, texts=texts))
        if value is not _ABSENT:
            body["stop"] = value
    if profile.claims("seed") and "seed" in fields:
        seeds: st.SearchStrategy[JSON] = st.integers(0, 2**31 - 1)
        if profile.claims("choice_seed"):
            seeds = st.one_of(seeds, st.lists(st.integers(0, 2**31 - 1), min_size=n, max_size=n))
        value = _maybe(draw, seeds)
        if value is not _ABSENT:
            body["seed"] = value
    if profile.claims("logit_bias") and "logit_bias" in fields:
        value = _maybe(draw, st.dictionaries(TOKEN_IDS.map(str),
                                             st.sampled_from([-100, -1, 1, 100]), max_size=2))
        if value is not _ABSENT:
            body["logit_bias"] = value
    if "echo" in body and "logprobs" in body and not profile.claims("echo_logprobs"):
        body.pop("echo")
    knobs = {**_sampling(fields), **_friendli_tokens(fields)}
    if not profile.claims("suffix"):
        knobs.pop("suffix", None)
    if not profile.claims("stop_tokens"):
        knobs.pop("stop_tokens", None)
    for name, strategy in knobs.items():
        value = _maybe(draw, strategy)
        if value is not _ABSENT:
            body[name] = value
    if "min_tokens" in fields and draw(st.booleans()):
        body["min_tokens"] = draw(st.integers(0, body["max_tokens"]))
    if "response_format" in fields and "min_tokens" not in body and draw(st.booleans()):
        body["response_format"] = draw(st.sampled_from([{"type": "text"},
                                                        {"type": "json_object"}]))
    if (not streaming and profile.claims("best_of") and "best_of" in fields
            and draw(st.booleans())):
        body["best_of"] = draw(st.integers(n, max(n, 3)))
    return body


def completion_requests(
    profile: spec.Profile,
    *,
    model: str = "reference-ngram",
    max_tokens: int = 16,
    max_n: int = 3,
    max_prompts: int = 3,
    stream: bool | None = None,
    texts: Sequence[str] = (),
) -> st.SearchStrategy[dict[str, JSON]]:
    """Valid request bodies for ``profile``'s completions operation.

    ``max_tokens`` caps generation (live endpoints cost money), as ``max_n`` caps ``n`` (and
    ``best_of``) and ``max_prompts`` the length of prompt lists; ``stream`` fixes streaming on
    or off (None: both); ``texts`` (what the server wrote) adds stop strings taken from it
    (:func:`stop_sequences`). Every body passes the profile's request schema and cross-field
    rules.
    """
    check_profile(profile)
    check_count("max_tokens", max_tokens)
    check_count("max_n", max_n)
    check_count("max_prompts", max_prompts)
    if stream is not None and not isinstance(stream, bool):
        raise ValueError(f"stream={stream!r} must be True, False or None")
    if not isinstance(model, str) or not model:
        raise ValueError(f"model={model!r} must be a non-empty string")
    pieces = tuple(texts)
    stop_pieces(pieces)  # checks them
    validator = profile.validator("request")
    return _build(profile, model, max_tokens, max_n, max_prompts, stream, pieces).filter(
        lambda body: validator.is_valid(body)
        and not spec.cross_field_violations(body, profile.name)
    )
