"""vLLM's output extensions, each beside the greedy request it changes.

Spec: vLLM's "Extra parameters" of the Completions API
(https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html#completions-api) with
the meanings of ``SamplingParams`` (https://docs.vllm.ai/en/latest/api/vllm/sampling_params.html):
``ignore_eos``, ``stop_token_ids``, ``include_stop_str_in_output``, ``prompt_logprobs`` and
``return_tokens_as_token_ids``; ``spec/completions.yaml`` (``VllmCompletionRequest``).

Every request is greedy, so a server that honours a field answers as its baseline up to the
point the field changes. The token ids ``stop_token_ids`` is aimed with are learned from the
server itself: ``return_tokens_as_token_ids`` names the greedy answer's tokens by id, and the
plain twin of that request gives their text.
"""

from __future__ import annotations

from spec import JSON

from .model import ProbeSession, ok_json
from .registry import probe
from .samplers_huggingface import ENDING_PROMPT, LOOPING_PROMPT, MAX_TOKENS

TOKEN_NAMES = "token-id-names"
PROMPT_LOGPROBS = 2
"""Alternatives asked per prompt position: each entry holds the prompt token and up to 2 more."""
STOP_LENGTH = 3
"""Characters of the stop string taken from the greedy answer."""
FIRST_STOP_TOKEN = 2
"""The stop token is the first token from this position on not seen before it: the answer
before it is not empty."""


def _greedy(prompt: str, **fields: JSON) -> dict[str, JSON]:
    return {"prompt": prompt, "max_tokens": MAX_TOKENS, "temperature": 0, **fields}


@probe("ignore-eos", "ignore_eos on a greedy answer that ends early", features=("ignore_eos",))
async def ignore_eos(s: ProbeSession) -> None:
    await s.complete("ignore", s.body(**_greedy(ENDING_PROMPT, ignore_eos=True)))


@probe(TOKEN_NAMES, "a greedy answer's logprob tokens by text and as token_id:N",
       features=("return_tokens_as_token_ids",))
async def token_id_names(s: ProbeSession) -> None:
    """The greedy answer with logprobs, its tokens named by text and by id."""
    await s.gather(
        s.complete("plain", s.body(**_greedy(LOOPING_PROMPT, logprobs=1))),
        s.complete("ids", s.body(**_greedy(LOOPING_PROMPT, logprobs=1,
                                           return_tokens_as_token_ids=True))),
    )


def _tokens(body: dict[str, JSON] | None) -> tuple[str, list[str]] | None:
    """``(text, logprobs.tokens)`` of the first choice, when both are there."""
    choices = body.get("choices") if body else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    if not isinstance(choice, dict):
        return None
    text, logprobs = choice.get("text"), choice.get("logprobs")
    tokens = logprobs.get("tokens") if isinstance(logprobs, dict) else None
    if not isinstance(text, str) or not isinstance(tokens, list):
        return None
    if not all(isinstance(token, str) for token in tokens):
        return None
    return text, tokens


def stop_token_choice(text: str, names: list[str], ids: list[str]) -> tuple[int, int] | None:
    """``(position, id)`` of the stop token: the first token from :data:`FIRST_STOP_TOKEN` on
    whose id did not occur before and whose text, with every one before it, spells the start
    of the answer (so the answer up to it is known)."""
    numbers: list[int] = []
    for name in ids:
        head, _, digits = name.partition(":")
        if head != "token_id" or not digits.isdigit():
            return None
        numbers.append(int(digits))
    spelled = ""
    for position, (token, number) in enumerate(zip(names, numbers, strict=False)):
        if not text.startswith(spelled + token) or not token:
            return None
        if position >= FIRST_STOP_TOKEN and number not in numbers[:position]:
            return position, number
        spelled += token
    return None


@probe("stop-token-ids", "stop_token_ids with a token of the greedy answer",
       features=("stop_token_ids", "return_tokens_as_token_ids"), needs=(TOKEN_NAMES,))
async def stop_token_ids(s: ProbeSession) -> None:
    earlier = s.earlier(TOKEN_NAMES).exchanges
    plain = _tokens(ok_json(earlier["plain"])) if "plain" in earlier else None
    named = _tokens(ok_json(earlier["ids"])) if "ids" in earlier else None
    chosen = (stop_token_choice(plain[0], plain[1], named[1])
              if plain is not None and named is not None else None)
    if plain is None or named is None or chosen is None:
        s.missing("stopped", "the greedy answer's tokens could not be named by id and text")
        return
    position, token = chosen
    s.note("position", position)
    s.note("before", "".join(plain[1][:position]))
    s.note("token_text", plain[1][position])
    await s.complete("stopped", s.body(**_greedy(LOOPING_PROMPT, stop_token_ids=[token])))


def stop_string_choice(text: str) -> str | None:
    """A stop string of :data:`STOP_LENGTH` characters from the greedy answer's second third
    on, without whitespace at its ends, found first where it is taken."""
    for start in range(len(text) // 3, len(text) - STOP_LENGTH + 1):
        stop = text[start:start + STOP_LENGTH]
        if stop.strip() == stop and text.find(stop) == start:
            return stop
    return None


@probe("include-stop", "include_stop_str_in_output with a stop string of the greedy answer",
       features=("include_stop_str_in_output", "stop"))
async def include_stop(s: ProbeSession) -> None:
    baseline = await s.complete("baseline", s.body(**_greedy(LOOPING_PROMPT)))
    body = ok_json(baseline)
    choices = body.get("choices") if body else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    text = choice.get("text") if isinstance(choice, dict) else None
    stop = stop_string_choice(text) if isinstance(text, str) else None
    if stop is None:
        for key in ("ns", "s"):
            s.missing(key, "the greedy answer holds no stop string to choose")
        return
    fields = _greedy(LOOPING_PROMPT, stop=[stop], include_stop_str_in_output=True)
    await s.gather(s.complete("ns", s.body(**fields)),
                   s.complete("s", s.body(**fields, stream=True)))


@probe("prompt-logprobs", f"prompt_logprobs {PROMPT_LOGPROBS}, non-streamed",
       features=("prompt_logprobs",))
async def prompt_logprobs(s: ProbeSession) -> None:
    await s.complete("ranked", s.body(ENDING_PROMPT, max_tokens=1, temperature=0,
                                      prompt_logprobs=PROMPT_LOGPROBS))
