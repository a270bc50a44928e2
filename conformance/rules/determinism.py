"""Streamed equals non-streamed, seeded runs repeat, and no U+FFFD from split characters.

Spec: ``Seed`` in ``spec/completions.yaml`` ("the same seed and parameters give the same
result"); ``Temperature`` ("0 samples greedily (always the most likely token)"); the chunk
contract that joined chunk texts are the completion's text (``ChunkChoice``: "``text`` holds
only the new text"). Bug classes 14, 15, 24 and 33; peer suites' check 1 ("concatenated stream
text equals the non-stream text at temperature 0").
"""

from __future__ import annotations

from conformance.model import NotApplicable, Violation
from conformance.run.check_context import CheckContext
from conformance.views import compact

from .base import BUGS, MUST, SCHEMAS, SHOULD, SPEC, rule
from .common import assembled, choices_of, require_parity, text_of

REPLACEMENT = "\ufffd"


def _compare(ctx: CheckContext, probe: str, plain_key: str, stream_key: str) -> None:
    plain = choices_of(ctx, probe, plain_key)
    streamed = assembled(ctx, probe, stream_key)
    for index, choice in streamed.items():
        want = plain[index]
        if choice.text != want.get("text"):
            raise Violation(
                f"choice {index}: the joined stream text differs from the non-streamed text",
                expected=want.get("text"), actual=choice.text, path=f"choices[{index}].text",
                exchange=f"{probe}/{stream_key}", evidence=compact(choice.texts),
            )
        if choice.finish_reason != want.get("finish_reason"):
            raise Violation(
                f"choice {index}: the stream's finish_reason differs from the non-streamed one",
                expected=want.get("finish_reason"), actual=choice.finish_reason,
                path=f"choices[{index}].finish_reason", exchange=f"{probe}/{stream_key}",
                evidence=compact(choice.finish_payload.value if choice.finish_payload else None),
            )


@rule(
    "DET-001", MUST, "Greedy stream equals non-streamed",
    requirement="At temperature 0, the joined stream text and finish_reason of each choice "
    "equal the non-streamed response's.",
    citation=f"{SCHEMAS}/Temperature; {SCHEMAS}/ChunkChoice; {BUGS} #14, #24",
    source=SPEC, probes=("greedy",), faults=("stream-differs",),
)
def greedy_stream_matches(ctx: CheckContext) -> None:
    _compare(ctx, "greedy", "ns", "s")


def _seeded_texts(ctx: CheckContext, key: str) -> list[str]:
    return [text_of(c, f"seeded/{key}") for c in choices_of(ctx, "seeded", key).values()]


@rule(
    "DET-002", MUST, "Seeded stream equals non-streamed",
    requirement="With a seed at temperature 1, the joined stream text equals the non-streamed "
    "text of the same request.",
    citation=f"{SCHEMAS}/Seed; {BUGS} #33",
    source=SPEC, probes=("seeded",), features=("seed",), faults=("stream-differs",),
)
def seeded_stream_matches(ctx: CheckContext) -> None:
    first = _seeded_texts(ctx, "ns")
    if any(_seeded_texts(ctx, key) != first for key in ("r2", "r3")):
        raise NotApplicable("seeded requests do not repeat (judged by DET-003)")
    _compare(ctx, "seeded", "ns", "s")


@rule(
    "DET-003", MUST, "Seeded requests repeat",
    requirement="The same seeded request at temperature 1 returns the same text every time, "
    "also while unseeded requests run concurrently.",
    citation=f"{SCHEMAS}/Seed (\"the same seed and parameters give the same result\"); "
    f"{BUGS} #33",
    source=SPEC, probes=("seeded",), features=("seed",), faults=("seed-ignored",),
)
def seeded_repeats(ctx: CheckContext) -> None:
    first = _seeded_texts(ctx, "ns")
    for key in ("r2", "r3"):
        again = _seeded_texts(ctx, key)
        if again != first:
            raise Violation(
                "the same seeded request gave another text",
                expected=first, actual=again, path="choices[0].text",
                exchange=f"seeded/{key}", evidence=compact(again),
            )


@rule(
    "DET-004", MUST, "No U+FFFD from split characters",
    requirement="A streamed text holds no more U+FFFD replacement characters than the "
    "non-streamed text: multi-byte characters split across tokens are sent whole.",
    citation=f"{SCHEMAS}/ChunkChoice; {BUGS} #14",
    source=SPEC, probes=("greedy", "unicode"), faults=("utf8-split-replacement",),
)
def no_split_replacement(ctx: CheckContext) -> None:
    require_parity(ctx)
    plain = text_of(choices_of(ctx, "unicode", "ns")[0], "unicode/ns")
    streamed = assembled(ctx, "unicode", "s")[0]
    if streamed.text.count(REPLACEMENT) > plain.count(REPLACEMENT):
        bad = next(t for t in streamed.texts if REPLACEMENT in t)
        raise Violation(
            "the stream holds U+FFFD where the non-streamed text has a character",
            expected=plain, actual=streamed.text, path="choices[0].text",
            exchange="unicode/s", evidence=compact(bad),
        )


@rule(
    "DET-005", SHOULD, "Token-prompt streams do not leak the prompt",
    requirement="With a token-id prompt and echo off, the joined stream text equals the "
    "non-streamed text (the prompt never leaks into the stream).",
    citation=f"{SCHEMAS}/CompletionRequest/properties/prompt; {BUGS} #15",
    source=SPEC, probes=("greedy", "token-prompts"), features=("token_prompts",),
    faults=("prompt-leak-stream", "token-prompt-rejected"),
)
def token_prompt_stream(ctx: CheckContext) -> None:
    require_parity(ctx)
    _compare(ctx, "token-prompts", "flat", "flat_s")
