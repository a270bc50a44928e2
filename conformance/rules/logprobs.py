"""The logprobs object: present when asked, four equal arrays that spell the text, offsets
from the prompt start, top alternatives sized logprobs (+1), every value <= 0.

Spec: ``Logprobs`` in ``spec/completions.yaml`` ("up to ``logprobs + 1`` entries per position.
0 still returns the logprobs object, with the chosen token's logprob") and ``LogprobsObject``
("The four arrays have one entry per token, in order ... ``text_offset`` counts characters from
the start of the prompt"). Bug classes 26-29.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from conformance.model import HarnessProblem, NotApplicable, Violation
from conformance.run.check_context import CheckContext
from conformance.views import char_offsets, compact, logprob_arrays
from spec import JSON

from .base import BUGS, MUST, SCHEMAS, SPEC, rule
from .common import assembled, choice_of, judgeable, no_arrays, text_of
from .shared_checks import tokens_spell_text

LOGPROBS = f"{SCHEMAS}/Logprobs"
OBJECT = f"{SCHEMAS}/LogprobsObject"
Arrays = dict[str, list[JSON]]


def _requested(ctx: CheckContext) -> Iterator[tuple[str, str, JSON, str]]:
    """``(label, text, logprobs value, prompt)`` of each of the logprobs probe's requests that
    can be read: a broken stream does not hide its non-streamed twins (NotApplicable only when
    none can be read).

    The probe records three (``l0``, ``ln``, ``ln_s``); a fuzzed exchange is filed as the one
    it resembles (:mod:`conformance.bindings.binders`), so keys never recorded are passed over.
    """
    prompt = str(ctx.note("logprobs", "prompt"))
    recorded = ctx.outcome("logprobs").requests

    def plain(key: str) -> Callable[[], tuple[str, JSON]]:
        def read() -> tuple[str, JSON]:
            choice = choice_of(ctx, "logprobs", key)
            return text_of(choice, f"logprobs/{key}"), choice.get("logprobs")
        return read

    def streamed() -> tuple[str, JSON]:
        choice = assembled(ctx, "logprobs", "ln_s")[0]
        return choice.text, choice.logprobs

    readers: dict[str, Callable[[], tuple[str, JSON]]] = {
        key: plain(key) for key in ("l0", "ln") if key in recorded}
    if "ln_s" in recorded:
        readers["ln_s"] = streamed
    for key, (text, value) in judgeable(readers):
        yield f"logprobs/{key}", text, value, prompt


def _arrays(ctx: CheckContext) -> Iterator[tuple[str, str, Arrays, str]]:
    """Each readable request whose choice has a logprobs object; NotApplicable when none has
    one (LOGPROBS-001 judges a missing object, and the others are still judged)."""
    missing: dict[str, list[str]] = {}
    found = False
    for label, text, value, prompt in _requested(ctx):
        arrays = logprob_arrays(value)
        if arrays is None:
            missing.setdefault(no_arrays(value), []).append(label)
            continue
        found = True
        yield label, text, arrays, prompt
    if not found:
        raise NotApplicable("; ".join(f"{', '.join(labels)}: {reason}"
                                      for reason, labels in missing.items())
                            or "no request: no logprobs object (judged by LOGPROBS-001)")


def _consistent(ctx: CheckContext) -> Iterator[tuple[str, str, Arrays, str]]:
    """Each request whose arrays are of equal length and whose tokens spell the text;
    NotApplicable when none's are (LOGPROBS-003 / 004 judge those)."""
    reasons, found = [], False
    for label, text, arrays, prompt in _arrays(ctx):
        if len({len(v) for v in arrays.values()}) != 1:
            reasons.append(f"{label}: the arrays differ in length (LOGPROBS-003)")
        elif not tokens_spell_text(arrays["tokens"], text):
            reasons.append(f"{label}: the tokens do not spell the text (LOGPROBS-004)")
        else:
            found = True
            yield label, text, arrays, prompt
    if not found:
        raise NotApplicable("; ".join(reasons))


@rule(
    "LOGPROBS-001", MUST, "logprobs N returns the object",
    requirement="With logprobs N >= 1, every choice carries a logprobs object, streamed and "
    "not.",
    citation=f"{LOGPROBS}; {BUGS} #29",
    source=SPEC, probes=("logprobs",), features=("logprobs",), faults=("logprobs-missing",),
    fuzz="logprobs",
)
def logprobs_present(ctx: CheckContext) -> None:
    for label, _, value, _ in _requested(ctx):
        if label.endswith("l0"):
            continue
        if not isinstance(value, dict):
            raise Violation(
                "logprobs were requested but the choice's logprobs is null",
                expected="a logprobs object", actual=value, path="choices[0].logprobs",
                exchange=label, evidence=compact(value),
            )


@rule(
    "LOGPROBS-002", MUST, "logprobs 0 still returns the object",
    requirement="logprobs 0 is not 'off': the choice carries a logprobs object with the "
    "chosen tokens' logprobs.",
    citation=f"{LOGPROBS} (\"0 still returns the logprobs object\"); {BUGS} #26",
    source=SPEC, probes=("logprobs",), features=("logprobs",),
    faults=("logprobs-zero-off", "logprobs-missing"), fuzz="logprobs",
)
def logprobs_zero_present(ctx: CheckContext) -> None:
    choice = choice_of(ctx, "logprobs", "l0")
    if not isinstance(choice.get("logprobs"), dict):
        raise Violation(
            "logprobs 0 returned no logprobs object",
            expected="a logprobs object", actual=choice.get("logprobs"),
            path="choices[0].logprobs", exchange="logprobs/l0", evidence=compact(choice),
        )


@rule(
    "LOGPROBS-003", MUST, "The four arrays have equal lengths",
    requirement="tokens, token_logprobs, top_logprobs and text_offset have one entry per "
    "token each.",
    citation=f"{OBJECT}; {BUGS} #28",
    source=SPEC, probes=("logprobs",), features=("logprobs",),
    faults=("logprobs-arrays-unequal",), fuzz="logprobs",
)
def arrays_equal(ctx: CheckContext) -> None:
    for label, _, arrays, _ in _arrays(ctx):
        lengths = {name: len(values) for name, values in arrays.items()}
        if len(set(lengths.values())) != 1:
            raise Violation(
                "the logprobs arrays differ in length",
                expected="equal lengths", actual=lengths, path="choices[0].logprobs",
                exchange=label, evidence=compact(lengths),
            )


def _echo_arrays(ctx: CheckContext) -> Iterator[tuple[str, str, str, Arrays]]:
    """``(label, text, prompt, arrays)`` of the echo probe's non-streamed requests that asked
    for logprobs and whose text starts with the prompt (ECHO-001 judges the others)."""
    try:
        outcome = ctx.outcome("echo")
        prompt = ctx.note("echo", "prompt")
    except (NotApplicable, HarnessProblem):
        return
    for key in ("ns", "max0"):
        request = outcome.requests.get(key)
        if not isinstance(request, dict) or request.get("logprobs") is None:
            continue
        try:
            choice = choice_of(ctx, "echo", key)
        except (NotApplicable, HarnessProblem):
            continue
        text, arrays = choice.get("text"), logprob_arrays(choice.get("logprobs"))
        if isinstance(text, str) and isinstance(prompt, str) and text.startswith(prompt) \
                and arrays is not None:
            yield f"echo/{key}", text, prompt, arrays


@rule(
    "LOGPROBS-004", MUST, "The tokens spell the text",
    requirement="The logprobs tokens, joined (bytes: escapes decoded), spell the choice's text; "
    "under echo, the prompt and completion (or the completion alone, which ECHO-003 judges).",
    citation=f"{OBJECT}; {BUGS} #28",
    source=SPEC, probes=("logprobs", "echo"), features=("logprobs",),
    faults=("logprobs-tokens-mismatch", "echo-bos-counted"), fuzz="logprobs",
)
def tokens_join_to_text(ctx: CheckContext) -> None:
    judged, skipped = False, None
    try:
        for label, text, arrays, _ in _arrays(ctx):
            judged = True
            if not tokens_spell_text(arrays["tokens"], text):
                raise Violation(
                    "the joined logprobs tokens differ from the text",
                    expected=text, actual="".join(str(t) for t in arrays["tokens"]),
                    path="choices[0].logprobs.tokens", exchange=label,
                    evidence=compact(arrays["tokens"]),
                )
    except NotApplicable as reason:  # the echo exchanges may still be judged
        skipped = reason
    for label, text, prompt, arrays in _echo_arrays(ctx):
        judged = True
        tokens = arrays["tokens"]
        if not tokens_spell_text(tokens, text) and not tokens_spell_text(
                tokens, text[len(prompt):]):
            raise Violation(
                "under echo, the joined logprobs tokens spell neither the prompt and completion "
                "nor the completion",
                expected=text, actual="".join(str(t) for t in tokens),
                path="choices[0].logprobs.tokens", exchange=label, evidence=compact(tokens),
            )
    if not judged and skipped is not None:
        raise skipped


def located_offsets(tokens: Sequence[JSON], text: str) -> list[int | None]:
    """For each token, the characters of ``text`` before it, where the tokens can be located
    in the text: each token is looked for where the ones before it ended, and one not found
    there (``<s>``, ``</s>``: a token the text leaves out) gets None and takes no room. Only
    when the tokens found spell the whole text, so that the others are extras and no token
    was found in a place another one holds; else every entry is None. When the tokens spell
    the text this is :func:`char_offsets`, which also places byte tokens."""
    if tokens_spell_text(tokens, text):
        return char_offsets(tokens)  # type: ignore[arg-type]
    cursor, located = 0, list[int | None]()
    for token in tokens:
        if isinstance(token, str) and token and not token.startswith("bytes:") \
                and text.startswith(token, cursor):
            located.append(cursor)
            cursor += len(token)
        else:
            located.append(None)
    return located if cursor == len(text) else [None] * len(located)


def _offset_arrays(ctx: CheckContext) -> Iterator[tuple[str, Arrays, list[int | None], list[int]]]:
    """``(label, arrays, located offsets, bases)`` of every logprobs object whose tokens can be
    placed in its text: the logprobs probe's (echo off: the base is the prompt's length, or 0
    from the completion) and the echo probe's (the text starts with the prompt: base 0).
    NotApplicable with every reason when none can."""
    reasons, found = [], False
    offered: list[tuple[str, str, Arrays, list[int]]] = []
    try:
        offered += [(label, text, arrays, [len(prompt), 0])
                    for label, text, arrays, prompt in _arrays(ctx)]
    except NotApplicable as reason:
        reasons.append(str(reason))
    offered += [(label, text, arrays, [0]) for label, text, _, arrays in _echo_arrays(ctx)]
    for label, text, arrays, bases in offered:
        if len({len(v) for v in arrays.values()}) != 1:
            reasons.append(f"{label}: the arrays differ in length (LOGPROBS-003)")
            continue
        located = located_offsets(arrays["tokens"], text)
        if all(position is None for position in located):
            reasons.append(f"{label}: the tokens cannot be placed in the text (LOGPROBS-004)")
            continue
        found = True
        yield label, arrays, located, bases
    if not found:
        raise NotApplicable("; ".join(reasons) or "no logprobs object (judged by LOGPROBS-001)")


def _check_offsets(ctx: CheckContext, *, from_completion: bool = False) -> None:
    """Each text_offset is ``base + `` the characters of the text before its token, one base per
    array: the prompt's length (OpenAI, echo off), 0 under echo, or also 0 with echo off
    (``from_completion``: vLLM counts from the completion). Tokens the text leaves out (an
    end-of-text ``</s>``) are not judged, so the offsets of the others still are."""
    for label, arrays, located, bases in _offset_arrays(ctx):
        pairs = [(i, offset, before) for i, (offset, before)
                 in enumerate(zip(arrays["text_offset"], located, strict=False))
                 if before is not None]
        echoed = label.startswith("echo/")
        bases = bases if from_completion or echoed else bases[:1]
        base = next((b for b in bases if pairs and pairs[0][1] == b + pairs[0][2]), bases[0])
        for i, offset, before in pairs:
            if offset != base + before:
                where = "the prompt's start" + (" or the completion's" if from_completion
                                                and not echoed else "")
                raise Violation(
                    f"text_offset[{i}] does not count characters from {where}",
                    expected=base + before, actual=offset,
                    path=f"choices[0].logprobs.text_offset[{i}]", exchange=label,
                    evidence=compact(arrays["text_offset"]),
                )


@rule(
    "LOGPROBS-005", MUST, "text_offset counts from the prompt start",
    requirement="text_offset[i] == len(prompt) + len(''.join(tokens[:i])) (echo off), "
    "streamed and not; under echo, the token's place in the text. Tokens the text leaves out "
    "(an end-of-text token) are passed over, the others still judged.",
    citation=f"{OBJECT}; {BUGS} #27",
    source=SPEC, probes=("logprobs", "echo"), traits=("text_offsets=from_prompt",),
    features=("logprobs",),
    faults=("logprobs-offsets-misaligned", "logprobs-offsets-from-completion",
            "echo-bos-counted"),
    fuzz="logprobs",
)
def offsets_from_prompt(ctx: CheckContext) -> None:
    _check_offsets(ctx)


def collapsed_alike(entry: dict[str, JSON]) -> bool:
    """Whether ``entry`` may have lost alternatives to the object's keys: two tokens that each
    decode to no text of their own (the bytes of one character, split) both key as ``""`` or
    ``"\ufffd"``, and a JSON object keeps one of them.

    DEVIATION: vLLM builds each entry as ``{decoded token: logprob}``
    (``_create_completion_logprobs``:
    https://github.com/vllm-project/vllm/blob/v0.32.0/vllm/entrypoints/openai/completion/serving.py),
    and its byte-fallback alternatives collapse so; a live fuzz of vLLM 0.32 on the lab's Llama
    found 819 short entries in 2,424, each holding such a key, and none without one.
    OpenAI keys a partial character as ``"bytes:\\x.."`` and loses none.
    """
    return any(shares_its_key(key) for key in entry)


def shares_its_key(token: str) -> bool:
    """Whether ``token`` decodes to no text of its own (``""``, or one holding U+FFFD), so
    that alike alternatives share its key in a top_logprobs object (:func:`collapsed_alike`)."""
    return token == "" or "\ufffd" in token


@rule(
    "LOGPROBS-006", MUST, "top_logprobs has logprobs or logprobs+1 entries",
    requirement="Each non-null top_logprobs entry holds at least logprobs and at most "
    "logprobs + 1 alternatives (fewer only where alternatives that decode to no text of their "
    "own, keyed \"\" or U+FFFD, had to share a key).",
    citation=f"{LOGPROBS} (\"up to logprobs + 1 entries per position\"); {BUGS} #28",
    source=SPEC, probes=("logprobs",), features=("logprobs",),
    faults=("logprobs-too-many-top", "logprobs-too-few-top"), fuzz="logprobs",
)
def top_sized(ctx: CheckContext) -> None:
    top = ctx.note("logprobs", "top")
    for label, _, arrays, _ in _arrays(ctx):
        want = 0 if label.endswith("l0") else int(top)  # type: ignore[arg-type]
        for i, entry in enumerate(arrays["top_logprobs"]):
            if not isinstance(entry, dict):
                continue
            short = len(entry) < want and not collapsed_alike(entry)
            if short or len(entry) > want + 1:
                raise Violation(
                    f"top_logprobs[{i}] has {len(entry)} entries for logprobs {want}",
                    expected=f"{want} or {want + 1}", actual=len(entry),
                    path=f"choices[0].logprobs.top_logprobs[{i}]", exchange=label,
                    evidence=compact(entry),
                )


@rule(
    "LOGPROBS-007", MUST, "top_logprobs holds the chosen token",
    requirement="Each top_logprobs entry contains the sampled token with the same logprob as "
    "token_logprobs (a token keyed \"\" or U+FFFD may share its key with an alike "
    "alternative's logprob: LOGPROBS-006).",
    citation=f"{LOGPROBS} (\"and of the chosen token\"); OpenAI openapi.yaml 2.3.0, "
    "CreateCompletionRequest.logprobs (\"The API will always return the logprob of the sampled "
    f"token\"); {BUGS} #28",
    source=SPEC, probes=("logprobs",), features=("logprobs",),
    faults=("logprobs-top-missing-chosen",), fuzz="logprobs",
)
def top_holds_chosen(ctx: CheckContext) -> None:
    for label, _, arrays, _ in _consistent(ctx):
        rows = zip(arrays["tokens"], arrays["token_logprobs"], arrays["top_logprobs"], strict=False)
        for i, (token, value, entry) in enumerate(rows):
            if not isinstance(entry, dict) or value is None:
                continue
            shared = isinstance(token, str) and shares_its_key(token)
            if token not in entry or (abs(float(entry[token]) - float(value)) > 1e-6
                                      and not shared):
                raise Violation(
                    f"top_logprobs[{i}] does not hold the chosen token {token!r} at {value}",
                    expected={token: value}, actual=entry,
                    path=f"choices[0].logprobs.top_logprobs[{i}]", exchange=label,
                    evidence=compact(entry),
                )


@rule(
    "LOGPROBS-008", MUST, "Every logprob is <= 0",
    requirement="Every token_logprobs and top_logprobs value is a log probability: <= 0.",
    citation=f"{OBJECT}; {BUGS} #28",
    source=SPEC, probes=("logprobs",), features=("logprobs",), faults=("logprobs-positive",),
    fuzz="logprobs",
)
def logprobs_not_positive(ctx: CheckContext) -> None:
    for label, _, arrays, _ in _arrays(ctx):
        values = [v for v in arrays["token_logprobs"] if v is not None]
        values += [v for e in arrays["top_logprobs"] if isinstance(e, dict) for v in e.values()]
        positive = [v for v in values if isinstance(v, (int, float)) and v > 0]
        if positive:
            raise Violation(
                f"{len(positive)} logprob value(s) are positive",
                expected="<= 0", actual=positive[0], path="choices[0].logprobs",
                exchange=label, evidence=compact(arrays["token_logprobs"]),
            )


@rule(
    "LOGPROBS-009", MUST, "text_offset counts from the prompt or completion start",
    requirement="text_offset[i] == base + len(''.join(tokens[:i])) (echo off), with one base "
    "per array: len(prompt) as OpenAI counts, or 0 as vLLM and other OpenAI-compatible "
    "servers count from the completion; any other offset is wrong. Under echo, the token's "
    "place in the text; tokens the text leaves out are passed over.",
    citation=f"{OBJECT}; {BUGS} #27",
    source=SPEC, probes=("logprobs", "echo"), traits=("text_offsets=from_prompt_or_completion",),
    features=("logprobs",), faults=("logprobs-offsets-misaligned", "echo-bos-counted"),
    fuzz="logprobs",
)
def offsets_from_prompt_lenient(ctx: CheckContext) -> None:
    _check_offsets(ctx, from_completion=True)
