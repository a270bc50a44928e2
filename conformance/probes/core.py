"""Core probes: stream / non-stream pairs, the include_usage matrix, batches, n, length.

Spec: ``POST /v1/completions`` in ``spec/completions.yaml`` and the OpenAI reference it
restates: "If set, tokens will be sent as data-only server-sent events as they become
available, with the stream terminated by a ``data: [DONE]`` message".
"""

from __future__ import annotations

import spec
from spec import JSON

from .model import ProbeSession
from .prompts import (
    NEAR_GREEDY_TOP_P,
    PROMPT_A,
    PROMPT_B,
    SAMPLING_TEMPERATURE,
    SEED,
    UNICODE_PROMPT,
)
from .registry import probe


def usage_options(s: ProbeSession) -> JSON:
    return {"include_usage": True} if s.claims("include_usage") else None


@probe("greedy", "PROMPT_A at temperature 0, non-streamed and streamed")
async def greedy(s: ProbeSession) -> None:
    """PROMPT_A at temperature 0, non-streamed and streamed (with usage when claimed)."""
    common = {"max_tokens": s.settings.max_tokens, "temperature": 0}
    await s.gather(
        s.complete("ns", s.body(PROMPT_A, **common)),
        s.complete("s", s.body(PROMPT_A, **common, stream=True, stream_options=usage_options(s))),
    )


@probe("seeded", "seeded sampling, repeated under concurrent unseeded traffic", features=("seed",))
async def seeded(s: ProbeSession) -> None:
    """A seeded request at temperature 1: non-streamed, streamed, then twice more while two
    unseeded requests run at the same time (bug class 33: seeds ignored when batched)."""
    common = {"max_tokens": s.settings.max_tokens, "temperature": SAMPLING_TEMPERATURE}
    body = s.body(PROMPT_A, **common, seed=SEED)
    await s.gather(
        s.complete("ns", body),
        s.complete("s", s.body(PROMPT_A, **common, seed=SEED, stream=True,
                               stream_options=usage_options(s))),
    )
    noise = s.body(PROMPT_A, **common)
    await s.gather(
        s.complete("noise1", noise),
        s.complete("r2", body),
        s.complete("noise2", noise),
        s.complete("r3", body),
    )


@probe("usage-matrix", "streams with stream_options absent, {} and include_usage false")
async def usage_matrix(s: ProbeSession) -> None:
    """Streams with ``stream_options`` absent, ``{}`` and ``{"include_usage": false}``."""
    common = {"max_tokens": 4, "temperature": 0, "stream": True}
    await s.gather(
        s.complete("absent", s.body(PROMPT_A, **common)),
        s.complete("empty", s.body(PROMPT_A, **common, stream_options={})),
        s.complete("false", s.body(PROMPT_A, **common, stream_options={"include_usage": False})),
    )


@probe("batch", "two prompts with n=2, non-streamed and streamed", features=("n", "prompt_lists"))
async def batch(s: ProbeSession) -> None:
    """``prompt: [A, B]`` with ``n: 2`` at temperature 0, both ways, and B alone.

    A server may refuse ``n > 1`` at temperature 0 as a request form of its own (vLLM: 400 "n
    must be 1 when using greedy sampling"): ERRORS-008 fails that refusal, and the request is
    sent again sampled (:func:`sampled_retry`) so that the rules of indices and usage judge
    what they serve instead of failing the same refusal again. Where the profile's own
    cross-field rules refuse the greedy form (``vllm``), only the sampled one is sent."""
    common = {"max_tokens": s.settings.max_tokens, "temperature": 0}
    prompts = [PROMPT_A, PROMPT_B]
    plain = s.body(prompts, **common, n=2)
    streamed = s.body(prompts, **common, n=2, stream=True, stream_options=usage_options(s))
    s.note("prompts", prompts)
    s.note("n", 2)
    refused = spec.cross_field_violations(plain, s.settings.profile.name)
    if refused:  # the profile's own check (vLLM's): only the sampled form is a valid request
        for key in ("ns", "s"):
            s.missing(key, f"not sent: {refused[0].message} (the profile's own rule)")
        await s.gather(s.complete(RETRIED["ns"], sampled_retry(s, plain)),
                       s.complete(RETRIED["s"], sampled_retry(s, streamed)),
                       s.complete("b", s.body(PROMPT_B, **common)))
        return
    answers = await s.gather(
        s.complete("ns", plain),
        s.complete("s", streamed),
        s.complete("b", s.body(PROMPT_B, **common)),
    )
    retries = [s.complete(RETRIED[key], sampled_retry(s, body))
               for key, body, answer in (("ns", plain, answers[0]), ("s", streamed, answers[1]))
               if answer.status in REFUSED_FORM]
    await s.gather(*retries)


REFUSED_FORM = frozenset({400, 422})
"""The statuses of a request whose form the server refused (a 5xx is a server that broke, and a
retry in another form would only repeat it)."""
RETRIED = {"ns": "ns_sampled", "s": "s_sampled"}
"""The key of each ``batch`` request's sampled retry."""


def sampled_retry(s: ProbeSession, body: dict[str, JSON]) -> dict[str, JSON]:
    """``body`` sampled rather than greedy: temperature 1 with the smallest ``top_p`` (only the
    likeliest token survives the nucleus, so the text is still the greedy one) and the seed
    when claimed."""
    seed = SEED if s.claims("seed") else None
    return {**body, **s.body(temperature=SAMPLING_TEMPERATURE, top_p=NEAR_GREEDY_TOP_P,
                             seed=seed)}


@probe("n-sampling", "n=4 at temperature 1, unseeded twice and seeded once", features=("n",))
async def n_sampling(s: ProbeSession) -> None:
    """``n: 4`` at temperature 1, twice (so one unlucky draw cannot fail the rule), and once
    with a seed (a server that gives every choice the seed would return n copies)."""
    body = s.body(PROMPT_A, max_tokens=s.settings.max_tokens, temperature=1.0, n=4)
    steps = [s.complete("first", body), s.complete("second", body)]
    if s.claims("seed"):
        steps.append(s.complete("seeded", {**body, "seed": SEED}))
    await s.gather(*steps)


@probe("length", "max_tokens=3 at temperature 0")
async def length(s: ProbeSession) -> None:
    """PROMPT_A at temperature 0 with ``max_tokens: 3``: shorter than ``greedy``'s text."""
    logprobs = 0 if s.claims("logprobs") else None
    await s.complete("short", s.body(PROMPT_A, max_tokens=3, temperature=0, logprobs=logprobs))
    s.note("max_tokens", 3)


@probe("unicode", "a continuation with multi-byte characters, both ways")
async def unicode(s: ProbeSession) -> None:
    """A prompt whose continuation has multi-byte characters, non-streamed and streamed."""
    common = {"max_tokens": s.settings.max_tokens, "temperature": 0}
    await s.gather(
        s.complete("ns", s.body(UNICODE_PROMPT, **common)),
        s.complete("s", s.body(UNICODE_PROMPT, **common, stream=True)),
    )
