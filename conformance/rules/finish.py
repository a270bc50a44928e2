"""finish_reason: null until a choice's finish chunk, one reason per choice, from the enum, last.

Spec: ``ChunkFinishReason`` in ``spec/completions.yaml`` ("every chunk but the last of a choice
carries ``null``"), ``FinishReason`` ("``stop``: a natural stop (end of text), a stop string or
a stop token; ``length``: ``max_tokens`` or the context length was reached"); bug classes 1-5.
"""

from __future__ import annotations

from conformance.model import NotApplicable, Violation
from conformance.run.check_context import CheckContext
from conformance.views import (
    Payload,
    StreamView,
    compact,
    expected_choices,
    is_finish,
    raw_text,
    repeats_finish,
)
from spec import JSON

from .base import BUGS, MUST, SCHEMAS, SPEC, rule
from .common import choice_of, finish_values, responses, sound_streams, text_of
from .shared_checks import max_tokens_overrun


def _entries(view: StreamView) -> list[tuple[int, dict[str, JSON], Payload]]:
    """``(index, choice entry, payload)`` for every choice of every chunk, in order."""
    found: list[tuple[int, dict[str, JSON], Payload]] = []
    for payload in view.chunks:
        for entry in payload.value.get("choices") or []:
            if isinstance(entry, dict) and isinstance(entry.get("index"), int):
                found.append((entry["index"], entry, payload))
    return found


def _indices_exact(view: StreamView, body: JSON) -> bool:
    seen = {index for index, _, _ in _entries(view)}
    return seen == set(range(expected_choices(body)))


@rule(
    "FINISH-001", MUST, "finish_reason is null until the last chunk",
    requirement="In a stream, every choice entry carries finish_reason, and it is JSON null "
    "(not an empty string) on every chunk but the choice's last.",
    citation=f"{SCHEMAS}/ChunkFinishReason; {BUGS} #2",
    source=SPEC, probes=("greedy",), faults=("finish-reason-empty-string",), scan=True,
)
def null_until_finish(ctx: CheckContext) -> None:
    key_required = ctx.profile.finish_key_on_chunks == "null"
    for label, _, view in sound_streams(ctx):
        for index, entry, payload in _entries(view):
            if key_required and "finish_reason" not in entry:
                raise Violation(
                    f"choice {index} of event {payload.position} has no finish_reason key",
                    expected=None, actual="(absent)", path="choices[].finish_reason",
                    exchange=label, evidence=raw_text(payload.event.raw),
                )
            if entry.get("finish_reason") == "":
                raise Violation(
                    f'choice {index} of event {payload.position} has finish_reason ""',
                    expected=None, actual="", path="choices[].finish_reason",
                    exchange=label, evidence=raw_text(payload.event.raw),
                )


@rule(
    "FINISH-002", MUST, "Each choice finishes once, with one reason",
    requirement="In a stream, each choice index has a chunk with a non-null finish_reason "
    "before [DONE]; a later chunk of that choice may only repeat the same reason with empty "
    "text (as OpenAI does on a length finish), never change it or carry text.",
    citation=f"{SCHEMAS}/ChunkFinishReason; {BUGS} #1, #3, #4",
    source=SPEC, probes=("greedy",), faults=("finish-doubled", "finish-missing", "done-early"),
    scan=True,
)
def one_finish_per_choice(ctx: CheckContext) -> None:
    # DEVIATION: OpenAI repeats a length finish on one more chunk with empty text (recorded
    # 2023-10-04 and 2025-08-12, gpt-3.5-turbo-instruct, the last two events of
    # https://github.com/LangStream/langstream/blob/72ea2add84cf063e5dec28b68544d41b0e131919/langstream-runtime/langstream-runtime-impl/src/test/java/ai/langstream/kafka/TextCompletionsIT.java
    # and https://github.com/DataDog/dd-trace-py/blob/43981b1909b9cbcf355df766f0bd97899e31cd31/tests/llmobs/llmobs_cassettes/openai/openai_completions_post_6e95e620.yaml),
    # where its OpenAPI file says only the last chunk carries the reason: the repeat is valid.
    for label, body, view in sound_streams(ctx):
        if not _indices_exact(view, body):
            continue  # INDICES-002 judges the indices
        entries = _entries(view)
        for index in range(expected_choices(body)):
            own = [(entry, payload) for i, entry, payload in entries if i == index]
            finishes = [(e, p) for e, p in own if is_finish(e.get("finish_reason"))]
            if not finishes:
                raise Violation(
                    f"choice {index} has no finish chunk",
                    expected="a finish_reason before [DONE]", actual=None,
                    path=f"choices[{index}].finish_reason", exchange=label,
                    evidence=raw_text(own[-1][1].event.raw),
                )
            reason = finishes[0][0]["finish_reason"]
            for entry, payload in finishes[1:]:
                if repeats_finish(entry, reason):
                    continue
                changed = entry.get("finish_reason") != reason
                raise Violation(
                    f"choice {index} finishes again "
                    + (f"with another reason ({entry['finish_reason']!r} after {reason!r})"
                       if changed else "and carries text or tokens after its finish"),
                    expected=f"no repeat, or {reason!r} again with empty text",
                    actual=compact(entry), path=f"choices[{index}].finish_reason",
                    exchange=label, evidence=raw_text(payload.event.raw),
                )


@rule(
    "FINISH-003", MUST, "finish_reason comes from the enum",
    requirement="A finish_reason that is not null is stop, length or content_filter (FriendliAI: "
    "stop or length), streamed or not.",
    citation=f"{SCHEMAS}/FinishReason; {BUGS} #2",
    source=SPEC, probes=("greedy", "stop"), faults=("finish-reason-nonstandard",), scan=True,
)
def finish_from_enum(ctx: CheckContext) -> None:
    allowed = finish_values(ctx)
    for label, _, exchange, body in responses(ctx):
        choices = body.get("choices") if isinstance(body, dict) else None
        for position, entry in enumerate(choices if isinstance(choices, list) else []):
            value = entry.get("finish_reason") if isinstance(entry, dict) else None
            if is_finish(value) and value not in allowed:
                raise Violation(
                    f"finish_reason {value!r} is not in the enum",
                    expected=sorted(allowed), actual=value,
                    path=f"choices[{position}].finish_reason", exchange=label,
                    evidence=raw_text(exchange.body),
                )
    for label, _, view in sound_streams(ctx):
        for index, entry, payload in _entries(view):
            value = entry.get("finish_reason")
            if is_finish(value) and value not in allowed:
                raise Violation(
                    f"finish_reason {value!r} of choice {index} is not in the enum",
                    expected=sorted(allowed), actual=value, path="choices[].finish_reason",
                    exchange=label, evidence=raw_text(payload.event.raw),
                )


@rule(
    "FINISH-004", MUST, "Nothing of a choice follows its finish chunk",
    requirement="No chunk carrying a choice's text comes after that choice's finish chunk.",
    citation=f"{SCHEMAS}/ChunkFinishReason; {BUGS} #3",
    source=SPEC, probes=("greedy",), faults=("text-after-finish",), scan=True,
)
def nothing_after_finish(ctx: CheckContext) -> None:
    for label, body, view in sound_streams(ctx):
        if not _indices_exact(view, body):
            continue
        finished: set[int] = set()
        for index, entry, payload in _entries(view):
            if is_finish(entry.get("finish_reason")):
                finished.add(index)  # a second finish chunk is FINISH-002's defect
            elif index in finished:
                raise Violation(
                    f"choice {index} has a chunk after its finish chunk",
                    expected="no chunk after the finish chunk", actual=compact(entry),
                    path=f"choices[{index}]", exchange=label,
                    evidence=raw_text(payload.event.raw),
                )


def _uncut(ctx: CheckContext, text: str, full: str) -> str:
    """Why the 3-token run shows no cut to judge, naming PARAMS-007 only when it fails (a
    pointer at a rule that passed sends a reader nowhere)."""
    if max_tokens_overrun(ctx) is not None:
        return ("the 3-token run is not a proper prefix of the 16-token greedy run (is "
                "max_tokens honoured? PARAMS-007)")
    if text == full:
        return (f"the 3-token run and the 16-token greedy run gave the same text "
                f"({text[:40]!r}): max_tokens 3 cut nothing")
    return (f"the 3-token run ({text[:40]!r}) is not a prefix of the 16-token greedy run "
            f"({full[:40]!r}): the greedy runs part before max_tokens 3 could cut")


@rule(
    "FINISH-005", MUST, "finish_reason is length when max_tokens cut the text",
    requirement="When generation stops because max_tokens was reached, finish_reason is "
    "length (a greedy run cut at 3 tokens, whose uncut run goes on, says length).",
    citation=f"{SCHEMAS}/FinishReason; {BUGS} #4, #5",
    source=SPEC, probes=("greedy", "length"), faults=("length-reported-as-stop",),
)
def length_when_cut(ctx: CheckContext) -> None:
    short = choice_of(ctx, "length", "short")
    full = text_of(choice_of(ctx, "greedy", "ns"), "greedy/ns")
    text = text_of(short, "length/short")
    reason = short.get("finish_reason")
    if reason not in finish_values(ctx):
        raise NotApplicable(f"finish_reason {reason!r} is not in the enum (FINISH-003)")
    if not (full.startswith(text) and len(full) > len(text)):
        raise NotApplicable(_uncut(ctx, text, full))
    if reason != "length":
        raise Violation(
            "max_tokens cut the text, but finish_reason is not length",
            expected="length", actual=reason, path="choices[0].finish_reason",
            exchange="length/short", evidence=compact(short),
        )
