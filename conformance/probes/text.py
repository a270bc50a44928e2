"""Probes of what the text contains: stop strings, echo, logprobs.

Spec: ``CompletionRequest.stop`` ("the returned text never contains them"), ``echo`` ("With
``logprobs``, the prompt tokens get log probabilities too, the first of them null") and
``Logprobs`` ("0 still returns the logprobs object") in ``spec/completions.yaml``.
"""

from __future__ import annotations

from collections.abc import Sequence

from conformance.views import char_offsets

from .model import ProbeSession, first_choice
from .prompts import NEVER_MATCHES, PROMPT_A
from .registry import probe


def choose_stop(text: str, tokens: Sequence[str] | None) -> str | None:
    """A stop string for the oracle: 5 characters of ``text`` straddling a token boundary
    (so it spans two tokens), first occurring where it is taken, after some text."""
    boundaries: list[int] = []
    if tokens:
        boundaries = [o for o in char_offsets(tokens)[1:] if o is not None]
    boundaries += [6, 8, 10]
    for b in boundaries:
        start = b - 2
        candidate = text[start : start + 5]
        if start < 2 or len(candidate) < 5 or "\ufffd" in candidate:
            continue
        if text.find(candidate) == start and candidate.strip():
            return candidate
    return None


@probe("stop", "the stop oracle: a stop string taken from a greedy run", features=("stop",))
async def stop(s: ProbeSession) -> None:
    """Greedy baseline T; then ``stop: [s]`` with s taken from T (both ways), and a stop that
    shares T's last characters but never matches (both ways)."""
    common = {"max_tokens": s.settings.max_tokens, "temperature": 0}
    logprobs = 0 if s.claims("logprobs") else None
    base = await s.complete("baseline", s.body(PROMPT_A, **common, logprobs=logprobs))
    choice = first_choice(base)
    text = choice.get("text") if choice else None
    keys = ("ns", "s", "never", "never_s")
    if not isinstance(text, str):
        for key in keys:
            s.missing(key, "the baseline request did not succeed")
        return
    lp = choice.get("logprobs") if choice else None
    tokens = lp.get("tokens") if isinstance(lp, dict) else None
    if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
        tokens = None
    stop_string = choose_stop(text, tokens)
    never = text[-2:] + NEVER_MATCHES
    s.note("baseline_text", text)
    s.note("never", never)
    steps = [
        s.complete("never", s.body(PROMPT_A, **common, stop=[never])),
        s.complete("never_s", s.body(PROMPT_A, **common, stop=[never], stream=True)),
    ]
    if stop_string is None:
        s.missing("ns", "no stop string could be taken from the baseline text")
        s.missing("s", "no stop string could be taken from the baseline text")
    else:
        s.note("stop", stop_string)
        s.note("expected", text[: text.find(stop_string)])
        steps += [
            s.complete("ns", s.body(PROMPT_A, **common, stop=[stop_string])),
            s.complete("s", s.body(PROMPT_A, **common, stop=[stop_string], stream=True)),
        ]
    await s.gather(*steps)


@probe("echo", "echo (with prompt logprobs), and max_tokens 0 with echo", features=("echo",))
async def echo(s: ProbeSession) -> None:
    """``echo: true`` (with logprobs when echo_logprobs is claimed), both ways, and
    ``max_tokens: 0`` with echo (which scores the prompt)."""
    logprobs = 1 if s.claims("echo_logprobs") and s.claims("logprobs") else None
    common = {"temperature": 0, "echo": True, "logprobs": logprobs}
    steps = [
        s.complete("ns", s.body(PROMPT_A, max_tokens=s.settings.max_tokens, **common)),
        s.complete("s", s.body(PROMPT_A, max_tokens=s.settings.max_tokens, **common, stream=True)),
    ]
    if s.claims("max_tokens_zero"):
        steps.append(s.complete("max0", s.body(PROMPT_A, max_tokens=0, **common)))
    else:
        s.missing("max0", "max_tokens_zero is not claimed")
    s.note("prompt", PROMPT_A)
    await s.gather(*steps)


@probe("logprobs", "logprobs 0 and 5, non-streamed and streamed", features=("logprobs",))
async def logprobs(s: ProbeSession) -> None:
    """``logprobs`` 0 and N (the profile's maximum, at most 5), non-streamed; N streamed."""
    limit = s.settings.profile.limits.get("logprobs")
    top = min(5, limit) if isinstance(limit, int) else 5
    common = {"max_tokens": s.settings.max_tokens, "temperature": 0}
    await s.gather(
        s.complete("l0", s.body(PROMPT_A, **common, logprobs=0)),
        s.complete("ln", s.body(PROMPT_A, **common, logprobs=top)),
        s.complete("ln_s", s.body(PROMPT_A, **common, logprobs=top, stream=True)),
    )
    s.note("top", top)
    s.note("prompt", PROMPT_A)
