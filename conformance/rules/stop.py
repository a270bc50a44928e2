"""Stop strings: excluded from the text, honoured at their first occurrence, never leaked.

Spec: ``CompletionRequest.stop`` in ``spec/completions.yaml``: "Up to 4 sequences where
generation stops; the returned text never contains them"; ``FinishReason``: "``stop``: a
natural stop (end of text), a stop string or a stop token". The oracle (bug class 22): take T
at temperature 0, pick s inside T; then the text is ``T[:T.find(s)]`` with finish_reason stop;
a stop that never matches leaves T unchanged. Bug classes 21 and 22.
"""

from __future__ import annotations

from conformance.model import NotApplicable, Violation
from conformance.run.check_context import CheckContext
from conformance.views import compact, stop_strings

from .base import BUGS, MUST, SCHEMAS, SPEC, rule
from .common import assembled, choice_of, choices_of, finish_values, require_parity, text_of

STOP = f"{SCHEMAS}/CompletionRequest/properties/stop"


def _oracle(ctx: CheckContext) -> tuple[str, str, str]:
    """``(stop string, expected text, baseline text)`` chosen by the probe."""
    stop, expected, base = (ctx.note("stop", k) for k in ("stop", "expected", "baseline_text"))
    if not all(isinstance(v, str) for v in (stop, expected, base)):
        raise NotApplicable("the stop probe chose no stop string")
    return stop, expected, base  # type: ignore[return-value]


@rule(
    "STOP-001", MUST, "The stop string is not in the text",
    requirement="The returned text contains no stop string of the request: not the one that "
    "ended generation, nor one that never matched.",
    citation=f"{STOP} (\"the returned text never contains them\"); {BUGS} #21",
    source=SPEC, probes=("stop",), features=("stop",), faults=("stop-leak",), fuzz="stopped",
)
def stop_excluded(ctx: CheckContext) -> None:
    outcome = ctx.outcome("stop")
    notes = outcome.notes  # the probe's oracle; a fuzzed request has none
    expected = notes.get("expected")
    if "ns" not in outcome.exchanges and "s" in outcome.exchanges:
        _fuzzed_stream_excluded(ctx)  # a run's stream is STOP-003's, beside its twin
        return
    stops = stop_strings(ctx.request("stop", "ns"))
    for index, choice in choices_of(ctx, "stop", "ns").items():
        text = text_of(choice, "stop/ns")
        for stop in (s for s in stops if s in text):
            if isinstance(expected, str) and text.startswith(expected + stop) and len(
                    text) > len(expected + stop):
                raise NotApplicable("generation went on past the stop string (judged by "
                                    "STOP-002)")
            raise Violation(
                "the returned text contains the stop string",
                expected=expected if isinstance(expected, str) else f"a text without {stop!r}",
                actual=text, path=f"choices[{index}].text", exchange="stop/ns",
                evidence=compact({"stop": stop, "text": text}),
            )
    if isinstance(notes.get("baseline_text"), str):
        _unmatched_stop_excluded(ctx, str(notes["baseline_text"]))


def _fuzzed_stream_excluded(ctx: CheckContext) -> None:
    """A fuzzed stream with stop strings, which has no non-streamed twin: its joined text
    holds none of them (a stream that leaks a stop string, or a token-id prompt's text that
    holds one, shows it here)."""
    stops = stop_strings(ctx.request("stop", "s"))
    for index, choice in assembled(ctx, "stop", "s").items():
        for stop in (s for s in stops if s in choice.text):
            raise Violation(
                "the stream's joined text contains the stop string",
                expected=f"a text without {stop!r}", actual=choice.text,
                path=f"choices[{index}].text", exchange="stop/s",
                evidence=compact({"stop": stop, "texts": choice.texts}),
            )


def _unmatched_stop_excluded(ctx: CheckContext, base: str) -> None:
    """The stop string that never matches must not show up either (a server that appends the
    stop string to every `stop` finish, end-of-text included, shows it here)."""
    never = ctx.note("stop", "never")
    try:
        text = text_of(choice_of(ctx, "stop", "never"), "stop/never")
    except NotApplicable:
        return  # STOP-002 judges the never-matching request
    if isinstance(never, str) and never in text:
        raise Violation(
            "the returned text contains a stop string that never occurred in the greedy text",
            expected=base, actual=text, path="choices[0].text", exchange="stop/never",
            evidence=compact({"stop": never, "text": text}),
        )


@rule(
    "STOP-002", MUST, "Generation ends at the stop string",
    requirement="At temperature 0, a stop string s taken from the greedy text T ends the text "
    "at T[:T.find(s)] with finish_reason stop; a stop string that never matches leaves T "
    "unchanged.",
    citation=f"{STOP}; {SCHEMAS}/FinishReason; {BUGS} #22",
    source=SPEC, probes=("stop",), features=("stop",), faults=("stop-ignored",),
)
def stop_oracle(ctx: CheckContext) -> None:
    stop, expected, base = _oracle(ctx)
    choice = choice_of(ctx, "stop", "ns")
    text, reason = text_of(choice, "stop/ns"), choice.get("finish_reason")
    if text == expected + stop:
        raise NotApplicable("the stop string was left in the text (judged by STOP-001)")
    if reason not in finish_values(ctx):
        raise NotApplicable(f"finish_reason {reason!r} is not in the enum (FINISH-003)")
    if text != expected:
        raise Violation(
            "the text is not the greedy text cut at the stop string",
            expected=expected, actual=text, path="choices[0].text", exchange="stop/ns",
            evidence=compact({"stop": stop, "baseline": base, "text": text}),
        )
    if reason != "stop":
        raise Violation(
            "a stop string ended generation, but finish_reason is not stop",
            expected="stop", actual=reason, path="choices[0].finish_reason",
            exchange="stop/ns", evidence=compact(choice),
        )
    never = text_of(choice_of(ctx, "stop", "never"), "stop/never")
    if never == base + str(ctx.note("stop", "never")):
        raise NotApplicable("the unmatched stop string was appended to the text (STOP-001)")
    if never != base:
        raise Violation(
            "a stop string that never matches changed the text",
            expected=base, actual=never, path="choices[0].text", exchange="stop/never",
            evidence=compact({"stop": ctx.note("stop", "never"), "text": never}),
        )


@rule(
    "STOP-003", MUST, "Streams never leak a stop string",
    requirement="With a stop string, the joined stream text equals the non-streamed text: "
    "no part of a multi-token stop string leaks, and text held back while a stop might match "
    "is sent when it does not.",
    citation=f"{STOP}; {BUGS} #21, #22",
    source=SPEC, probes=("greedy", "stop"), features=("stop",), faults=("stop-leak-stream",),
)
def stop_stream_matches(ctx: CheckContext) -> None:
    require_parity(ctx)
    for plain_key, stream_key in (("ns", "s"), ("never", "never_s")):
        plain = text_of(choice_of(ctx, "stop", plain_key), f"stop/{plain_key}")
        streamed = assembled(ctx, "stop", stream_key)[0]
        if streamed.text != plain:
            raise Violation(
                "with a stop string, the joined stream text differs from the non-streamed text",
                expected=plain, actual=streamed.text, path="choices[0].text",
                exchange=f"stop/{stream_key}", evidence=compact(streamed.texts),
            )
