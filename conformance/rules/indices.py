"""Choice indices: n x prompts choices, every index once, in prompt order.

Spec: ``CompletionRequest.prompt`` in ``spec/completions.yaml``: "Each prompt yields ``n``
choices; choice index = prompt index * n + k"; bug classes 16 and 17.
"""

from __future__ import annotations

from conformance.model import NotApplicable, Violation
from conformance.run.check_context import CheckContext
from conformance.views import raw_text

from .base import BUGS, MUST, SCHEMAS, SHOULD, SPEC, rule
from .common import (
    answered_form,
    choices_of,
    expected_choices,
    responses,
    sound_streams,
    text_of,
)

PROMPT = f"{SCHEMAS}/CompletionRequest/properties/prompt"


def _indices(entries: object) -> list[object]:
    if not isinstance(entries, list):
        return []
    return [e.get("index") if isinstance(e, dict) else None for e in entries]


@rule(
    "INDICES-001", MUST, "A response has every choice once",
    requirement="A non-streamed response has n x len(prompts) choices whose indices are "
    "0..n*len(prompts)-1, each once.",
    citation=f"{PROMPT}; {BUGS} #16, #17",
    source=SPEC, probes=("batch",), features=("n", "prompt_lists"),
    faults=("index-always-zero", "choice-missing"), scan=True,
)
def response_indices(ctx: CheckContext) -> None:
    for label, body, exchange, parsed in responses(ctx):
        if not isinstance(parsed, dict) or not isinstance(parsed.get("choices"), list):
            continue
        want = list(range(expected_choices(body)))
        got = _indices(parsed["choices"])
        if sorted(got, key=str) != sorted(want, key=str):
            raise Violation(
                "the choice indices are not 0..n*prompts-1, each once",
                expected=want, actual=got, path="choices[].index", exchange=label,
                evidence=raw_text(exchange.body),
            )


@rule(
    "INDICES-002", MUST, "A stream covers every index once",
    requirement="A stream's chunks carry choice indices 0..n*len(prompts)-1 and no others, "
    "each of them in at least one chunk.",
    citation=f"{PROMPT}; {BUGS} #16",
    source=SPEC, probes=("batch",), features=("n", "prompt_lists"),
    faults=("index-always-zero", "choice-missing"), scan=True,
)
def stream_indices(ctx: CheckContext) -> None:
    for label, body, view in sound_streams(ctx):
        want = set(range(expected_choices(body)))
        seen = {i for p in view.chunks for i in _indices(p.value.get("choices"))}
        if seen != want:
            shown = view.chunks[0].event.raw if view.chunks else b""
            raise Violation(
                "the stream's choice indices are not 0..n*prompts-1",
                expected=sorted(want), actual=sorted(seen, key=str), path="choices[].index",
                exchange=label, evidence=raw_text(shown),
            )


@rule(
    "INDICES-003", MUST, "Choices follow the prompts' order",
    requirement="Choice i answers prompts[i // n]: at temperature 0, choices 0-1 of [A, B] "
    "with n 2 are A's greedy text and choices 2-3 are B's.",
    citation=f"{PROMPT}; {BUGS} #17",
    source=SPEC, probes=("greedy", "batch"), features=("n", "prompt_lists"),
    faults=("prompts-swapped",),
)
def prompt_order(ctx: CheckContext) -> None:
    a = text_of(choices_of(ctx, "greedy", "ns")[0], "greedy/ns")
    b = text_of(choices_of(ctx, "batch", "b")[0], "batch/b")
    if a == b:
        raise NotApplicable("the two prompts have the same greedy text")
    key = answered_form(ctx, "batch", "ns")
    choices = choices_of(ctx, "batch", key)
    if key != "ns":
        texts = [choice.get("text") for choice in choices.values()]
        if any(text not in (a, b) for text in texts):
            raise NotApplicable(
                "batch/ns was refused (judged by ERRORS-008) and its sampled retry "
                f"batch/{key} did not give the greedy texts, so their order cannot be read")
    for index, choice in choices.items():
        want = a if index < 2 else b
        if choice.get("text") != want:
            raise Violation(
                f"choice {index} does not answer prompt {index // 2}",
                expected=want, actual=choice.get("text"), path=f"choices[{index}].text",
                exchange=f"batch/{key}", evidence=raw_text(ctx.exchange("batch", key).body),
            )


@rule(
    "INDICES-004", SHOULD, "Choices are listed in index order",
    requirement="A non-streamed response lists its choices by ascending index.",
    citation=f"{PROMPT} (OpenAI returns them in order)",
    source=SPEC, probes=("batch",), features=("n", "prompt_lists"),
    faults=("choices-unordered",), fuzz="plain",
)
def listed_in_order(ctx: CheckContext) -> None:
    key = answered_form(ctx, "batch", "ns")
    body = ctx.response("batch", key)
    got = _indices(body.get("choices"))
    if got != sorted(got, key=lambda i: i if isinstance(i, int) else -1):
        raise Violation(
            "choices are not in index order", expected=sorted(got, key=str), actual=got,
            path="choices[].index", exchange=f"batch/{key}",
            evidence=raw_text(ctx.exchange("batch", key).body),
        )
