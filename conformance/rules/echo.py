"""echo: the prompt comes back first, with prompt logprobs, also for token prompts and
``max_tokens: 0``.

Spec: ``CompletionRequest.echo`` in ``spec/completions.yaml``: "Echo the prompt before the
completion in ``text``. With ``logprobs``, the prompt tokens get log probabilities too, the
first of them null (nothing precedes it)"; ``MaxTokens``: "0 generates nothing (useful with
``echo`` to score a prompt)". Bug classes 18, 23, 24 and 25.
"""

from __future__ import annotations

from conformance.model import NotApplicable, Violation
from conformance.run.check_context import CheckContext
from conformance.views import compact, joined_bytes, logprob_arrays

from .base import BUGS, MUST, OPENAI_WIRE, SCHEMAS, SPEC, rule
from .common import assembled, choice_of, judgeable, no_arrays, text_of, usage_of
from .shared_checks import tokens_spell_text

ECHO = f"{SCHEMAS}/CompletionRequest/properties/echo"


def _scored_prompt(text: str, prompt: str, tokens: list) -> str | None:
    """The prompt as the logprobs tokens spell it when they cover it: ``prompt``, or
    ``" " + prompt`` from a tokenizer that adds a leading space (a SentencePiece dummy prefix,
    LOGPROBS-004 judges that spelling); None when they cover only the completion. Raises
    NotApplicable when they spell none of these (LOGPROBS-004)."""
    for prefix in ("", " "):
        if tokens_spell_text(tokens, prefix + text):
            return prefix + prompt
    if tokens_spell_text(tokens, text[len(prompt):]):
        return None
    raise NotApplicable("the logprobs tokens do not spell the text (LOGPROBS-004)")


def echoed_choice(ctx: CheckContext, key: str) -> tuple[str, dict]:
    """``(prompt, choice)`` of an echo request whose text starts with the prompt."""
    prompt = ctx.note("echo", "prompt")
    choice = choice_of(ctx, "echo", key)
    text = text_of(choice, f"echo/{key}")
    if not isinstance(prompt, str) or not text.startswith(prompt):
        raise NotApplicable("echo was not honoured (judged by ECHO-001)")
    return prompt, choice


@rule(
    "ECHO-001", MUST, "echo prepends the prompt",
    requirement="With echo true, each choice's text starts with its prompt, streamed (joined "
    "chunks) and not.",
    citation=f"{ECHO}; {BUGS} #18, #24",
    source=SPEC, probes=("echo",), traits=OPENAI_WIRE, features=("echo",),
    faults=("echo-ignored",),
)
def echo_prepends_prompt(ctx: CheckContext) -> None:
    prompt = ctx.note("echo", "prompt")
    readers = {
        "ns": lambda: text_of(choice_of(ctx, "echo", "ns"), "echo/ns"),
        "s": lambda: assembled(ctx, "echo", "s")[0].text,
    }
    for key, text in judgeable(readers):
        if not text.startswith(str(prompt)):
            raise Violation(
                "with echo, the text does not start with the prompt",
                expected=f"{prompt}...", actual=text, path="choices[0].text",
                exchange=f"echo/{key}", evidence=compact(text),
            )


@rule(
    "ECHO-002", MUST, "The first prompt logprob is null",
    requirement="With echo and logprobs, token_logprobs[0] and top_logprobs[0] are null "
    "(nothing precedes the first prompt token).",
    citation=f"{ECHO}; {SCHEMAS}/LogprobsObject (FIX comments); {BUGS} #23",
    source=SPEC, probes=("echo",), traits=OPENAI_WIRE, features=("echo", "echo_logprobs"),
    faults=("echo-logprobs-first-not-null",), fuzz="echo-scored",
)
def first_prompt_logprob_null(ctx: CheckContext) -> None:
    prompt, choice = echoed_choice(ctx, "ns")
    arrays = logprob_arrays(choice.get("logprobs"))
    if arrays is None:
        raise NotApplicable(no_arrays(choice.get("logprobs")))
    if not arrays["tokens"]:
        raise NotApplicable("the logprobs hold no tokens (judged by LOGPROBS-004)")
    if _scored_prompt(str(choice.get("text")), prompt, arrays["tokens"]) is None:
        raise NotApplicable("the prompt tokens have no logprobs entries (judged by ECHO-003)")
    for name in ("token_logprobs", "top_logprobs"):
        values = arrays[name]
        if values and values[0] is not None:
            raise Violation(
                f"with echo, {name}[0] is not null",
                expected=None, actual=values[0], path=f"choices[0].logprobs.{name}[0]",
                exchange="echo/ns", evidence=compact(choice.get("logprobs")),
            )


@rule(
    "ECHO-003", MUST, "Prompt tokens have logprob entries",
    requirement="With echo and logprobs, the logprobs arrays start with one entry per prompt "
    "token, spelling the prompt.",
    citation=f"{ECHO} (\"With logprobs, the prompt tokens get log probabilities too\"); "
    f"{BUGS} #23",
    source=SPEC, probes=("echo",), traits=OPENAI_WIRE, features=("echo", "echo_logprobs"),
    faults=("echo-prompt-logprobs-missing",), fuzz="echo-scored",
)
def prompt_tokens_scored(ctx: CheckContext) -> None:
    prompt, choice = echoed_choice(ctx, "ns")
    arrays = logprob_arrays(choice.get("logprobs"))
    if arrays is None:
        raise NotApplicable(no_arrays(choice.get("logprobs")))
    text = str(choice.get("text"))
    spelled_prompt = _scored_prompt(text, prompt, arrays["tokens"])
    if spelled_prompt is None:
        raise Violation(
            "the logprobs cover only the completion: the prompt tokens have no entries",
            expected=f"entries spelling {prompt!r} first", actual=compact(arrays["tokens"][:8]),
            path="choices[0].logprobs.tokens", exchange="echo/ns",
            evidence=compact(arrays["tokens"]),
        )
    spelled, want = b"", spelled_prompt.encode()
    for token in arrays["tokens"]:
        if spelled == want:
            return
        spelled += joined_bytes([token])
    if spelled != want:
        raise Violation(
            "the leading logprobs tokens do not spell the prompt",
            expected=prompt, actual=compact(arrays["tokens"][:8]),
            path="choices[0].logprobs.tokens", exchange="echo/ns",
            evidence=compact(arrays["tokens"]),
        )


@rule(
    "ECHO-004", MUST, "max_tokens 0 with echo scores the prompt",
    requirement="max_tokens 0 with echo is accepted (200): the text is exactly the prompt and "
    "completion_tokens is 0.",
    citation=f"{SCHEMAS}/MaxTokens; {BUGS} #25",
    source=SPEC, probes=("echo",), traits=OPENAI_WIRE,
    features=("echo", "max_tokens_zero"), faults=("max-tokens-overrun",),
)
def max_tokens_zero_echo(ctx: CheckContext) -> None:
    exchange = ctx.exchange("echo", "max0")
    if exchange.status != 200:
        raise Violation(
            "max_tokens 0 with echo was not accepted",
            expected=200, actual=exchange.status, path="status", exchange="echo/max0",
            evidence=compact(exchange.body.decode("utf-8", "replace")),
        )
    prompt, choice = echoed_choice(ctx, "max0")
    completion = usage_of(ctx, "echo", "max0")[1]
    if choice.get("text") != prompt or completion != 0:
        raise Violation(
            "max_tokens 0 with echo generated tokens",
            expected={"text": prompt, "completion_tokens": 0},
            actual={"text": choice.get("text"), "completion_tokens": completion},
            path="choices[0].text", exchange="echo/max0", evidence=compact(choice),
        )


@rule(
    "ECHO-005", MUST, "echo returns token prompts as text",
    requirement="With echo and a token-id prompt of k ids (max_tokens 0, logprobs 0), the text "
    "is the prompt's text (not empty) and the logprobs hold k prompt entries.",
    citation=f"{ECHO}; {SCHEMAS}/CompletionRequest/properties/prompt; {BUGS} #18",
    source=SPEC, probes=("vocab",), traits=OPENAI_WIRE,
    features=("echo", "token_prompts", "echo_logprobs", "max_tokens_zero"),
    faults=("echo-ignored", "echo-prompt-logprobs-missing", "token-prompt-rejected"),
)
def token_prompt_echoed(ctx: CheckContext) -> None:
    ids = ctx.note("vocab", "ids")
    choice = choice_of(ctx, "vocab", "decode")
    text = text_of(choice, "vocab/decode")
    arrays = logprob_arrays(choice.get("logprobs"))
    count = len(arrays["tokens"]) if arrays else None
    want = len(ids) if isinstance(ids, list) else None
    if not text:
        raise Violation(
            "with echo, a token-id prompt does not come back as text",
            expected=f"the text of {want if want is not None else '?'} prompt tokens",
            actual={"text": text[:80], "logprob_entries": count}, path="choices[0].text",
            exchange="vocab/decode", evidence=compact(choice)[:300],
        )
    if count is not None and want is not None and count < want:
        raise Violation(
            f"with echo, a {want}-id prompt has {count} logprobs entries",
            expected=want, actual=count, path="choices[0].logprobs.tokens",
            exchange="vocab/decode", evidence=compact(choice)[:300],
        )
