"""Valid completion requests (see the package docstring)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

import spec

JSON = Any
_TEXT_ALPHABET = st.characters(
    codec="utf-8", categories=("L", "N", "P", "Zs"), exclude_characters="\x00"
)
_WORDS = ("The", " Python", " language", " is", " a", " list", " of", " values", "\n", " caf\u00e9",
          " \u65e5\u672c", " \U0001f600", ".", ",", " and")


def _check_profile(profile: str) -> spec.Profile:
    try:
        return spec.get_profile(profile)
    except KeyError as error:
        raise ValueError(f"profile={profile!r} is not a known profile: {error}") from None


def _check_positive(name: str, value: int, *, minimum: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name}={value!r} must be an integer >= {minimum}")


def _prompt_texts() -> st.SearchStrategy[str]:
    words = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=6).map("".join)
    return st.one_of(words, st.text(_TEXT_ALPHABET, min_size=1, max_size=24))


def prompts(profile: str = "openai", *, max_prompts: int = 3) -> st.SearchStrategy[JSON]:
    """A `prompt` value the profile accepts: text, a list of texts, or token ids."""
    resolved = _check_profile(profile)
    _check_positive("max_prompts", max_prompts)
    options: list[st.SearchStrategy[JSON]] = [_prompt_texts()]
    if resolved.claims("prompt_lists"):
        options.append(st.lists(_prompt_texts(), min_size=1, max_size=max_prompts))
    if resolved.claims("token_prompts"):
        ids = st.lists(st.integers(0, 255), min_size=1, max_size=8)
        options.append(ids)
        options.append(st.lists(ids, min_size=1, max_size=max_prompts))
    return st.one_of(options)


def stop_sequences(profile: str = "openai") -> st.SearchStrategy[JSON]:
    """A `stop` value: one string or up to the profile's limit (FriendliAI: a list only)."""
    resolved = _check_profile(profile)
    limit = resolved.limits.get("stop") or 4
    item = st.sampled_from([".", "\n", " the", ",", "e", "on", "\n\n"])
    as_list = st.lists(item, min_size=1, max_size=limit, unique=True)
    if resolved.name == "friendli":
        return as_list
    return st.one_of(item, as_list)


def _optional(strategy: st.SearchStrategy[JSON]) -> st.SearchStrategy[JSON]:
    return st.one_of(st.just(_ABSENT), strategy)


_ABSENT = object()


@st.composite
def _build(draw: st.DrawFn, profile: spec.Profile, model: str, max_tokens: int,
           max_n: int, stream: bool | None) -> dict[str, JSON]:
    fields = set(profile.request_fields)
    body: dict[str, JSON] = {"model": model}
    if "tokens" in fields and profile.claims("tokens_prompt") and draw(st.booleans()):
        body["tokens"] = draw(st.lists(st.integers(0, 255), min_size=1, max_size=8))
    else:
        body["prompt"] = draw(prompts(profile.name))
    body["max_tokens"] = draw(st.integers(0 if profile.claims("max_tokens_zero") else 1,
                                          max_tokens))
    streaming = draw(st.booleans()) if stream is None else stream
    if streaming or draw(st.booleans()):
        body["stream"] = streaming
    if streaming and profile.claims("include_usage") and draw(st.booleans()):
        body["stream_options"] = draw(st.sampled_from(
            [{}, {"include_usage": True}, {"include_usage": False}]))
    candidates: dict[str, st.SearchStrategy[JSON]] = {
        "temperature": st.sampled_from([0.0, 0.5, 1.0, 1.5]),
        "top_p": st.sampled_from([0.5, 0.9, 1.0]),
        "presence_penalty": st.sampled_from([-1.0, 0.0, 0.5, 2.0]),
        "frequency_penalty": st.sampled_from([-1.0, 0.0, 0.5, 2.0]),
        "seed": st.integers(0, 2**31 - 1),
        "stop": stop_sequences(profile.name),
        "user": st.just("conformance"),
        "top_k": st.integers(0, 50),
        "min_p": st.sampled_from([0.0, 0.05]),
        "repetition_penalty": st.sampled_from([1.0, 1.2]),
    }
    if profile.claims("n"):
        candidates["n"] = st.integers(1, max_n)
    if profile.claims("logprobs"):
        candidates["logprobs"] = st.integers(0, profile.limits.get("logprobs") or 5)
    if profile.claims("echo"):
        candidates["echo"] = st.booleans()
    if profile.claims("logit_bias"):
        candidates["logit_bias"] = st.dictionaries(
            st.integers(0, 255).map(str), st.sampled_from([-100, -1, 1, 100]), max_size=2)
    for name, strategy in candidates.items():
        if name in fields:
            value = draw(_optional(strategy))
            if value is not _ABSENT:
                body[name] = value
    if (not streaming and profile.claims("best_of") and "best_of" in fields
            and draw(st.booleans())):
        body["best_of"] = draw(st.integers(body.get("n", 1), max(body.get("n", 1), 3)))
    if profile.claims("choice_seed") and isinstance(body.get("seed"), int) and draw(st.booleans()):
        body["seed"] = draw(st.lists(st.integers(0, 2**31 - 1), min_size=body.get("n", 1),
                                     max_size=body.get("n", 1)))
    return body


def completion_requests(
    profile: str = "openai",
    *,
    model: str = "reference-ngram",
    max_tokens: int = 16,
    max_n: int = 3,
    stream: bool | None = None,
) -> st.SearchStrategy[dict[str, JSON]]:
    """Valid request bodies for ``profile``'s completions operation.

    ``max_tokens`` caps generation (live endpoints cost money); ``stream`` fixes streaming
    on or off (None: both). Every body passes the profile's request schema and cross-field
    rules.
    """
    resolved = _check_profile(profile)
    _check_positive("max_tokens", max_tokens)
    _check_positive("max_n", max_n)
    if not isinstance(model, str) or not model:
        raise ValueError(f"model={model!r} must be a non-empty string")
    validator = resolved.validator("request")
    return _build(resolved, model, max_tokens, max_n, stream).filter(
        lambda body: validator.is_valid(body)
        and not spec.cross_field_violations(body, resolved.name)
    )
