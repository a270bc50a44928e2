"""Token usage: present exactly when requested, in the right place, with numbers that add up.

Spec: ``Usage`` in ``spec/completions.yaml`` ("Tokens in the prompts, counted once per prompt
(not multiplied by ``n``)"; "total_tokens: prompt_tokens + completion_tokens") and
``StreamOptions.include_usage`` ("When true, one extra chunk is streamed before ``data:
[DONE]``: its ``choices`` is an empty array and its ``usage`` holds the token counts of the
whole request. Every other chunk then carries ``usage: null`` (OpenAI) or no ``usage``
(FriendliAI)"); bug classes 5-10.
"""

from __future__ import annotations

from conformance.model import NotApplicable, Violation
from conformance.run.check_context import CheckContext
from conformance.views import compact, is_finish, raw_text
from spec import JSON

from .base import API, BUGS, FRIENDLI_WIRE, MUST, OPENAI_WIRE, SCHEMAS, SHOULD, SPEC, rule
from .common import (
    answered_form,
    choice_of,
    require_parity,
    responses,
    sound_streams,
    usage_numbers,
    usage_of,
)

INCLUDE_USAGE = f"{SCHEMAS}/StreamOptions/properties/include_usage"


@rule(
    "USAGE-001", MUST, "usage totals add up",
    requirement="Every usage object has integer prompt_tokens, completion_tokens and "
    "total_tokens, and total_tokens == prompt_tokens + completion_tokens (a completion_tokens "
    "left out of an answer with no generated text counts as 0, see USAGE-012).",
    citation=f"{SCHEMAS}/Usage; {BUGS} #8",
    source=SPEC, probes=("greedy",), faults=("usage-total-wrong",), scan=True,
)
def totals_add_up(ctx: CheckContext) -> None:
    found = []
    for label, _, exchange, body in responses(ctx):
        if isinstance(body, dict) and isinstance(body.get("usage"), dict):
            found.append((label, body["usage"], raw_text(exchange.body)))
    for label, _, view in sound_streams(ctx):
        for payload, usage in view.usage_objects():
            found.append((label, usage, raw_text(payload.event.raw)))
    for label, usage, evidence in found:
        numbers = usage_numbers(usage)
        if numbers is None:
            continue  # SCHEMA-001 judges the types
        prompt, completion, total = numbers
        if total != prompt + completion:
            raise Violation(
                "total_tokens is not prompt_tokens + completion_tokens",
                expected=prompt + completion, actual=total, path="usage.total_tokens",
                exchange=label, evidence=evidence,
            )


@rule(
    "USAGE-002", MUST, "No usage unless include_usage is true",
    requirement="With stream_options absent, {} or include_usage false, no chunk carries a "
    "usage object.",
    citation=f"{INCLUDE_USAGE}; {BUGS} #7",
    source=SPEC, probes=("usage-matrix",), faults=("usage-unrequested",), fuzz="usage-unrequested",
)
def no_usage_unrequested(ctx: CheckContext) -> None:
    recorded = ctx.outcome("usage-matrix").requests
    for key in ("absent", "empty", "false"):
        if key not in recorded:
            continue  # a fuzzed stream is filed under the one key it matches
        view = ctx.stream("usage-matrix", key)
        carried = view.usage_objects()
        if carried:
            payload, usage = carried[0]
            raise Violation(
                f"usage was sent although stream_options is {key}",
                expected=None, actual=compact(usage), path="usage",
                exchange=f"usage-matrix/{key}", evidence=raw_text(payload.event.raw),
            )


@rule(
    "USAGE-003", MUST, "include_usage true sends usage",
    requirement="With stream_options.include_usage true, a usage object is streamed before "
    "[DONE].",
    citation=f"{INCLUDE_USAGE}; {BUGS} #6",
    source=SPEC, probes=("greedy",), features=("include_usage",),
    faults=("usage-missing", "done-early"), fuzz="usage-stream",
)
def usage_when_requested(ctx: CheckContext) -> None:
    view = ctx.stream("greedy", "s")
    if not view.usage_objects():
        last = view.before_done[-1].event.raw if view.before_done else b""
        raise Violation(
            "include_usage is true but no chunk before [DONE] carries usage",
            expected="a usage chunk", actual="none", path="usage", exchange="greedy/s",
            evidence=raw_text(last),
        )


@rule(
    "USAGE-004", MUST, "One usage chunk, with choices []",
    requirement="The usage comes in exactly one chunk whose choices is an empty array (a copy "
    "on a finish chunk is tolerated).",
    citation=f"{SCHEMAS}/UsageChunk; {BUGS} #6, #9",
    source=SPEC, probes=("greedy",), features=("include_usage",),
    faults=("usage-choices-not-empty",), fuzz="usage-stream",
)
def usage_chunk_shape(ctx: CheckContext) -> None:
    view = ctx.stream("greedy", "s")
    if not view.usage_objects():
        raise NotApplicable("no usage was streamed (USAGE-003)")
    empty = [p for p in view.usage_chunks if p.value.get("choices") == []]
    if len(empty) != 1:
        shown = view.usage_chunks[0] if view.usage_chunks else view.usage_objects()[0][0]
        raise Violation(
            f"{len(empty)} chunks with choices [] carry the usage",
            expected="exactly one chunk with choices []",
            actual=compact(shown.value.get("choices")), path="choices",
            exchange="greedy/s", evidence=raw_text(shown.event.raw),
        )


@rule(
    "USAGE-005", MUST, "The usage chunk follows every finish chunk",
    requirement="The usage chunk comes after every choice's finish chunk (content, finish, "
    "usage, [DONE]).",
    citation=f"{INCLUDE_USAGE}; {BUGS} #9",
    source=SPEC, probes=("greedy",), features=("include_usage",),
    faults=("usage-before-finish",), fuzz="usage-stream",
)
def usage_after_finish(ctx: CheckContext) -> None:
    view = ctx.stream("greedy", "s")
    usage = [p for p in view.usage_chunks if p.value.get("choices") == []]
    if not usage:
        raise NotApplicable("no usage chunk (USAGE-003 / USAGE-004)")
    finishes = [
        p.position
        for p in view.chunks
        if any(isinstance(c, dict) and is_finish(c.get("finish_reason"))
               for c in p.value.get("choices") or [])
    ]
    if not finishes:
        raise NotApplicable("no finish chunk (judged by FINISH / INDICES rules)")
    if usage[0].position < max(finishes):
        raise Violation(
            "the usage chunk comes before a finish chunk",
            expected=f"usage after event {max(finishes)}", actual=f"event {usage[0].position}",
            exchange="greedy/s", evidence=raw_text(usage[0].event.raw),
        )


@rule(
    "USAGE-006", MUST, "Streamed usage equals non-streamed usage",
    requirement="At temperature 0, the streamed usage equals the usage of the same request "
    "not streamed.",
    citation=f"{SCHEMAS}/Usage; {BUGS} #8",
    source=SPEC, probes=("greedy",), features=("include_usage",),
    faults=("usage-stream-differs",),
)
def stream_usage_matches(ctx: CheckContext) -> None:
    require_parity(ctx)
    plain = usage_of(ctx, "greedy", "ns")
    streamed = usage_numbers(ctx.stream("greedy", "s").final_usage())
    if streamed is None:
        raise NotApplicable("no complete streamed usage (USAGE-003 / USAGE-004)")
    if streamed != plain:
        names = ("prompt_tokens", "completion_tokens", "total_tokens")
        raise Violation(
            "the streamed usage differs from the non-streamed usage",
            expected=dict(zip(names, plain, strict=True)),
            actual=dict(zip(names, streamed, strict=True)),
            path="usage", exchange="greedy/s",
            evidence=compact(dict(zip(names, streamed, strict=True))),
        )


@rule(
    "USAGE-007", MUST, "prompt_tokens is not multiplied by n",
    requirement="prompt_tokens counts each prompt once: for prompts [A, B] with n 2 it is "
    "prompt_tokens(A) + prompt_tokens(B).",
    citation=f"{SCHEMAS}/Usage/properties/prompt_tokens; {BUGS} #10",
    source=SPEC, probes=("greedy", "batch"), features=("n", "prompt_lists"),
    faults=("usage-prompt-times-n",),
)
def prompt_tokens_once(ctx: CheckContext) -> None:
    a, b = usage_of(ctx, "greedy", "ns")[0], usage_of(ctx, "batch", "b")[0]
    key = answered_form(ctx, "batch", "ns")
    both = usage_of(ctx, "batch", key)[0]
    if both != a + b:
        raise Violation(
            "prompt_tokens of two prompts with n=2 is not the sum of their prompt_tokens",
            expected=a + b, actual=both, path="usage.prompt_tokens", exchange=f"batch/{key}",
            evidence=compact(ctx.response("batch", key).get("usage")),
        )


@rule(
    "USAGE-008", MUST, "completion_tokens reaches max_tokens on length",
    requirement="When finish_reason is length because of max_tokens, completion_tokens is "
    "not below max_tokens.",
    citation=f"{SCHEMAS}/Usage/properties/completion_tokens; {BUGS} #5",
    source=SPEC, probes=("greedy", "length"), faults=("usage-completion-off-by-one",),
    fuzz="greedy-plain",
)
def completion_tokens_on_length(ctx: CheckContext) -> None:
    for probe, key in (("greedy", "ns"), ("length", "short")):
        choice = choice_of(ctx, probe, key)
        if choice.get("finish_reason") != "length":
            continue
        limit = ctx.request(probe, key).get("max_tokens")
        completion = usage_of(ctx, probe, key)[1]
        if isinstance(limit, int) and completion < limit:
            raise Violation(
                "finish_reason is length but completion_tokens is below max_tokens",
                expected=limit, actual=completion, path="usage.completion_tokens",
                exchange=f"{probe}/{key}",
                evidence=compact(ctx.response(probe, key).get("usage")),
            )


def _usage_present(ctx: CheckContext) -> None:
    body = ctx.response("greedy", "ns")
    if not isinstance(body.get("usage"), dict):
        raise Violation(
            "the non-streamed response has no usage object",
            expected="usage", actual=compact(body.get("usage")), path="usage",
            exchange="greedy/ns", evidence=compact(body),
        )


@rule(
    "USAGE-009", MUST, "FriendliAI responses carry usage",
    requirement="A non-streamed FriendliAI completion carries usage (it is required).",
    citation=f"{SCHEMAS}/FriendliCompletionResponse",
    source=API, probes=("greedy",), traits=FRIENDLI_WIRE, faults=("usage-missing",),
    fuzz="any-plain",
)
def friendli_usage_present(ctx: CheckContext) -> None:
    _usage_present(ctx)


@rule(
    "USAGE-010", SHOULD, "OpenAI responses carry usage",
    requirement="A non-streamed completion carries usage (optional in OpenAI's schema, always "
    "sent by OpenAI).",
    citation=f"{SCHEMAS}/CompletionResponse/properties/usage",
    source=API, probes=("greedy",), traits=OPENAI_WIRE, faults=("usage-missing",), fuzz="any-plain",
)
def openai_usage_present(ctx: CheckContext) -> None:
    _usage_present(ctx)


@rule(
    "USAGE-011", MUST, "Other chunks carry usage: null",
    requirement="With include_usage true, every chunk but the usage chunk carries "
    '"usage": null (OpenAI: "All other chunks will also include a usage field, but with a '
    'null value").',
    citation=f"{INCLUDE_USAGE}; spec/profiles/openai.yaml stream.usage_key_on_chunks",
    source=API, probes=("greedy",), traits=("usage_key_on_chunks=null",),
    features=("include_usage",), faults=("usage-key-missing-on-chunks",), fuzz="usage-stream",
)
def usage_null_elsewhere(ctx: CheckContext) -> None:
    view = ctx.stream("greedy", "s")
    for payload in view.chunks:
        if "usage" not in payload.value:
            raise Violation(
                f"event {payload.position} has no usage key",
                expected=None, actual="(absent)", path="usage", exchange="greedy/s",
                evidence=raw_text(payload.event.raw),
            )


def _generated_text(body: JSON, choices: list[JSON]) -> bool:
    """Whether a choice holds generated text (not under echo, whose text holds the prompt)."""
    if isinstance(body, dict) and body.get("echo"):
        return False
    return any(isinstance(c, dict) and isinstance(c.get("text"), str) and c["text"]
               for c in choices)


@rule(
    "USAGE-012", SHOULD, "completion_tokens is reported when tokens were generated",
    requirement="usage.completion_tokens may be left out only of an answer with no generated "
    "text (OpenAI leaves it out there, total_tokens then equal to prompt_tokens); an answer "
    "that generated tokens reports it.",
    citation=f"{SCHEMAS}/Usage",
    source=SPEC, probes=("greedy",), faults=("completion-tokens-left-out",), scan=True,
)
def completion_tokens_reported(ctx: CheckContext) -> None:
    found: list[tuple[str, dict[str, JSON], bool, str]] = []
    for label, request, exchange, body in responses(ctx):
        if isinstance(body, dict) and isinstance(body.get("usage"), dict):
            choices = body.get("choices")
            generated = _generated_text(request, choices if isinstance(choices, list) else [])
            found.append((label, body["usage"], generated, raw_text(exchange.body)))
    for label, request, view in sound_streams(ctx):
        entries = [entry for payload in view.chunks
                   for entry in payload.value.get("choices") or []]
        for payload, usage in view.usage_objects():
            found.append((label, usage, _generated_text(request, entries),
                          raw_text(payload.event.raw)))
    for label, usage, generated, evidence in found:
        if "completion_tokens" in usage:
            continue  # SCHEMA-001 judges its type
        prompt, total = usage.get("prompt_tokens"), usage.get("total_tokens")
        if generated or (isinstance(total, int) and isinstance(prompt, int) and total != prompt):
            raise Violation(
                "usage has no completion_tokens, although tokens were generated",
                expected="completion_tokens", actual=compact(usage),
                path="usage.completion_tokens", exchange=label, evidence=evidence,
            )
