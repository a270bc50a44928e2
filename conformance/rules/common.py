"""Readers the rule modules share: choices, usage, finish values, stream / non-stream parity.

Each raises :class:`~conformance.model.NotApplicable` when what it reads is missing or broken,
naming the rule that judges that defect, so the calling rule SKIPs instead of failing twice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TypeVar

from conformance.model import NotApplicable
from conformance.run.check_context import CheckContext
from conformance.transport import Exchange, Termination
from conformance.views import (
    AssembledChoice,
    StreamView,
    Unassemblable,
    assemble,
    expected_choices,
    response_choices,
)
from conformance.views.endings import unended, unfinished, unreadable, unsound
from conformance.wire_json import parse_json
from spec import JSON

T = TypeVar("T")

def finish_values(ctx: CheckContext) -> frozenset[str]:
    """The finish_reason enum of the profile (``finish_reasons``: FriendliAI has no
    content_filter)."""
    return frozenset(ctx.profile.finish_reasons)


def choices_of(ctx: CheckContext, probe: str, key: str) -> dict[int, dict[str, JSON]]:
    """The choices of a non-streamed 200 response, by index (INDICES-001 judges them)."""
    body = ctx.response(probe, key)
    try:
        return response_choices(body, expected_choices(ctx.request(probe, key)))
    except Unassemblable as exc:
        raise NotApplicable(f"{probe}/{key}: {exc} (judged by INDICES-001)") from None


def choice_of(ctx: CheckContext, probe: str, key: str, index: int = 0) -> dict[str, JSON]:
    return choices_of(ctx, probe, key)[index]


def text_of(choice: dict[str, JSON], label: str) -> str:
    text = choice.get("text")
    if not isinstance(text, str):
        raise NotApplicable(f"{label}: a choice has no text string (judged by SCHEMA-001)")
    return text


def assembled(ctx: CheckContext, probe: str, key: str) -> dict[int, AssembledChoice]:
    """The choices of a sound stream, by index (FINISH and INDICES rules judge structure)."""
    view = ctx.stream(probe, key)
    try:
        return assemble(view, expected_choices(ctx.request(probe, key)))
    except Unassemblable as exc:
        raise NotApplicable(f"{probe}/{key}: {exc} (judged by FINISH / INDICES rules)") from None


def judgeable(readers: Mapping[str, Callable[[], T]]) -> Iterator[tuple[str, T]]:
    """``(key, value)`` of each reader that can be read, so a rule judges every exchange it can
    (a broken stream does not hide the non-streamed twin); NotApplicable with every reason
    when none can."""
    reasons: list[str] = []
    for key, read in readers.items():
        try:
            value = read()
        except NotApplicable as exc:
            reasons.append(str(exc))
            continue
        yield key, value
    if readers and len(reasons) == len(readers):
        raise NotApplicable("; ".join(reasons))


def require_parity(ctx: CheckContext) -> None:
    """SKIP unless the greedy stream equals the greedy non-streamed response (DET-001)."""
    streamed = assembled(ctx, "greedy", "s")
    plain = choices_of(ctx, "greedy", "ns")
    for index, choice in streamed.items():
        if choice.text != plain[index].get("text"):
            raise NotApplicable("streams differ from non-streamed responses (judged by DET-001)")


def answered_form(ctx: CheckContext, probe: str, key: str) -> str:
    """The key of ``probe/key`` as the server accepted it: its retry in another form (recorded
    under ``key`` + ``_sampled`` when the server refused the first form, e.g. ``n > 1`` at
    temperature 0) when that was answered 200, else ``key`` itself, whose refusal then fails
    the calling rule (and ERRORS-008 fails the refusal of the first form either way)."""
    retry = f"{key}_sampled"
    outcome = ctx.outcome(probe)
    exchange = outcome.exchanges.get(retry)
    return retry if exchange is not None and exchange.status == 200 else key


def _count(value: JSON) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def usage_numbers(usage: JSON) -> tuple[int, int, int] | None:
    """``(prompt, completion, total)`` when all three are integers, else None.

    A missing ``completion_tokens`` reads as 0 when ``total_tokens`` equals ``prompt_tokens``:
    OpenAI leaves it out of an answer with no generated text (``FIX:`` in ``Usage``,
    ``spec/completions.yaml``). Left out where tokens were generated, the usage is not
    complete (USAGE-012 judges it)."""
    if not isinstance(usage, dict):
        return None
    prompt, total = _count(usage.get("prompt_tokens")), _count(usage.get("total_tokens"))
    completion = _count(usage.get("completion_tokens"))
    if completion is None and "completion_tokens" not in usage and prompt == total:
        completion = 0
    if prompt is None or completion is None or total is None:
        return None
    return prompt, completion, total


def usage_of(ctx: CheckContext, probe: str, key: str) -> tuple[int, int, int]:
    """The usage of a non-streamed response (USAGE-009 / USAGE-010 judge its presence, by wire;
    SCHEMA-001 its numbers)."""
    usage = ctx.response(probe, key).get("usage")
    numbers = usage_numbers(usage)
    if numbers is None:
        judge = ("USAGE-012" if isinstance(usage, dict) and "completion_tokens" not in usage
                 else "SCHEMA-001" if isinstance(usage, dict)
                 else "USAGE-009" if ctx.profile.wire == "friendli" else "USAGE-010")
        raise NotApplicable(f"{probe}/{key} has no complete usage (judged by {judge})")
    return numbers


def stream_views(ctx: CheckContext) -> Iterator[tuple[str, JSON, StreamView]]:
    """Every recorded 200 stream of a valid request, however it ended, none of them judged
    yet: the caller judges each (:func:`judge_whole`, ``ctx.judge``)."""
    for label, body, exchange in ctx.scanned():
        if exchange.is_sse and exchange.status == 200:
            yield label, body, ctx.view(exchange)


def streams(ctx: CheckContext) -> Iterator[tuple[str, JSON, StreamView]]:
    """Every recorded 200 stream of a valid request, however it ended, each judged: for rules
    about each byte or event, which judge a stream cut by a limit on what was seen."""
    for label, body, view in stream_views(ctx):
        ctx.judge(label)
        yield label, body, view


def event_streams(
    ctx: CheckContext, *, chunks: bool = False
) -> Iterator[tuple[str, JSON, StreamView]]:
    """Every recorded 200 stream of a valid request, for rules about each event: a stream the
    harness cut is judged on the events seen, and passed over (with the reason) when it had
    none. ``chunks``: a stream whose events cannot be read as chunks (:func:`unreadable`) is
    passed over too."""
    for label, body, view in stream_views(ctx):
        reason = unreadable(view) if chunks else None
        if reason is None and not (view.payloads or view.exchange.termination.by_server):
            reason = unended(view.exchange) or str(view.exchange.termination)
        if reason is not None:
            ctx.pass_over(label, reason)
            continue
        ctx.judge(label)
        yield label, body, view


def judge_whole(ctx: CheckContext, label: str, view: StreamView) -> bool:
    """Judge ``label`` when the server ended its stream normally; else pass it over with the
    reason (cut by a limit: SSE-009; dropped: SSE-008) and return False."""
    reason = unended(view.exchange)
    if reason is None:
        ctx.judge(label)
        return True
    ctx.pass_over(label, reason)
    return False


def whole_streams(ctx: CheckContext) -> Iterator[tuple[str, JSON, StreamView]]:
    """Every 200 stream of a valid request the server ended normally: for rules whose
    requirement needs the stream's end (``[DONE]``, the last event)."""
    for label, body, view in stream_views(ctx):
        if judge_whole(ctx, label, view):
            yield label, body, view


def sound_streams(ctx: CheckContext) -> Iterator[tuple[str, JSON, StreamView]]:
    """Every 200 stream of a valid request that can be read as chunks (:func:`unsound`); the
    others are passed over with the reason."""
    for label, body, view in stream_views(ctx):
        reason = unsound(view)
        if reason is None:
            ctx.judge(label)
            yield label, body, view
        else:
            ctx.pass_over(label, reason)


def responses(
    ctx: CheckContext, *, objects: bool = True
) -> Iterator[tuple[str, JSON, Exchange, JSON]]:
    """Every complete 200 non-streamed response of a valid request, with its parsed body; an
    answer not read whole (an event stream, cut by a limit) is passed over with the reason.
    A body that is not a JSON object is passed over too (SCHEMA-001 judges it), unless
    ``objects`` is False: then it comes with ``None`` for a body that is not JSON."""
    for label, body, exchange in ctx.scanned():
        if exchange.status != 200 or (isinstance(body, dict) and body.get("stream") is True):
            continue
        reason = unfinished(exchange)
        if reason is not None:
            ctx.pass_over(label, reason)
            continue
        if exchange.termination is not Termination.EOF:
            continue
        problem: str | None
        try:
            parsed: JSON = parse_json(exchange.body)
        except ValueError as exc:
            parsed, problem = None, f"not JSON ({exc})"
        else:
            problem = None if isinstance(parsed, dict) else f"a JSON {type(parsed).__name__}"
        if problem is not None and objects:
            ctx.pass_over(label, f"the 200 body is {problem}: judged by SCHEMA-001")
            continue
        ctx.judge(label)
        yield label, body, exchange, parsed


def no_arrays(value: JSON) -> str:
    """Why a choice's ``logprobs`` has no four arrays to read, naming the rule that judges it:
    LOGPROBS-001 a missing object, SCHEMA-001 an object of another shape (the chat shape,
    ``content: [{token, logprob}]``, which LOGPROBS-001 accepts as an object)."""
    if isinstance(value, dict):
        return "the logprobs object lacks the four arrays (judged by SCHEMA-001)"
    return "no logprobs object (judged by LOGPROBS-001)"
