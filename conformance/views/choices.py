"""Choices as a client assembles them: per index, from a stream's chunks or a response body.

Spec: ``CompletionRequest.prompt``: "Each prompt yields ``n`` choices; choice index = prompt
index * n + k"; ``ChunkChoice``: "``text`` holds only the new text"; ``CompletionChunk``:
"``finish_reason`` is null until a choice's last chunk". Assembly refuses (with the reason) any
stream whose choice structure is broken, because the rules that judge that structure are
others' (INDICES, FINISH); the rules that compare texts then SKIP instead of failing twice.

What does not change the joined text does not refuse assembly: a chunk whose choice has no
``text`` key adds nothing to it (SCHEMA-001 judges the missing key), and an entry after the
finish chunk that carries nothing (no text, finish_reason, logprobs or token, as some servers
put ``{"index": 0}`` on the usage chunk) is passed over (USAGE-004 judges where usage rides).
So a server that only leaves keys out is still judged on what it streamed.

DEVIATION: an entry after the finish chunk that repeats the same finish_reason with empty text
(and logprobs with empty arrays, or none) is passed over too: OpenAI ends a stream cut by
``max_tokens`` so, the reason on its last token's chunk and once more on a chunk with
``"text": ""`` (gpt-3.5-turbo-instruct, recorded 2023-10-04:
https://github.com/LangStream/langstream/blob/72ea2add84cf063e5dec28b68544d41b0e131919/langstream-runtime/langstream-runtime-impl/src/test/java/ai/langstream/kafka/TextCompletionsIT.java).
FINISH-002 judges a repeat that changes the reason or carries text.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from spec import JSON

from .stream import Payload, StreamView


class Unassemblable(Exception):
    """The choices cannot be assembled; the message says which structural defect prevents it."""


def is_finish(value: JSON) -> bool:
    """A finish_reason that ends a choice: any value but null and the empty string."""
    return value is not None and value != ""


@dataclass
class AssembledChoice:
    """One choice of a stream: its joined text, its finish, its joined logprobs."""

    index: int
    texts: list[str] = field(default_factory=list)
    finish_reason: JSON = None
    finish_payload: Payload | None = None
    tokens: list[int] | None = field(default_factory=list)
    logprob_arrays: dict[str, list[JSON]] | None = None
    logprobs_seen: int = 0
    null_logprobs: int = 0
    payloads: list[Payload] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(self.texts)

    @property
    def logprobs(self) -> dict[str, list[JSON]] | None:
        """The chunks' logprobs objects joined array by array (None when none was sent)."""
        return self.logprob_arrays if self.logprobs_seen else None


_ARRAYS = ("tokens", "token_logprobs", "top_logprobs", "text_offset")


def _add_logprobs(choice: AssembledChoice, value: JSON) -> None:
    if value is None:
        choice.null_logprobs += 1
        return
    if not isinstance(value, dict):
        raise Unassemblable(f"choice {choice.index} has a logprobs value that is not an object")
    choice.logprobs_seen += 1
    if choice.logprob_arrays is None:
        choice.logprob_arrays = {name: [] for name in _ARRAYS}
    for name in _ARRAYS:
        items = value.get(name)
        if not isinstance(items, list):
            raise Unassemblable(f"choice {choice.index} logprobs.{name} is not an array")
        choice.logprob_arrays[name].extend(items)


def _carries_nothing(entry: dict[str, JSON]) -> bool:
    """An entry that adds no text, finish, logprobs or token to its choice."""
    return (
        entry.get("text") in (None, "")
        and not is_finish(entry.get("finish_reason"))
        and entry.get("logprobs") is None
        and entry.get("token") is None
    )


def repeats_finish(entry: dict[str, JSON], reason: JSON) -> bool:
    """An entry that repeats a choice's finish ``reason`` and adds nothing: no text, no token,
    logprobs null or with empty arrays (OpenAI's trailing chunk on a ``length`` finish)."""
    logprobs = entry.get("logprobs")
    empty = logprobs is None or (isinstance(logprobs, dict) and all(
        value in (None, []) for value in logprobs.values()))
    return (entry.get("finish_reason") == reason and entry.get("text") in (None, "")
            and entry.get("token") is None and empty)


def assemble(view: StreamView, expected: int) -> dict[int, AssembledChoice]:
    """Choices 0..expected-1 of a stream; raises :class:`Unassemblable` with the reason."""
    assembled: dict[int, AssembledChoice] = {}
    for payload in view.chunks:
        entries = payload.value.get("choices") if isinstance(payload.value, dict) else None
        if not isinstance(entries, list):
            raise Unassemblable(f"event {payload.position} has no choices array")
        for entry in entries:
            if not isinstance(entry, dict):
                raise Unassemblable(f"event {payload.position} has a choice that is not an object")
            index, text = entry.get("index"), entry.get("text", "")
            if not isinstance(index, int) or isinstance(index, bool):
                raise Unassemblable(f"event {payload.position}: a choice has no integer index")
            if not 0 <= index < expected:
                raise Unassemblable(f"choice index {index} is outside 0..{expected - 1}")
            if not isinstance(text, str):
                raise Unassemblable(f"event {payload.position} choice {index} has no text string")
            choice = assembled.setdefault(index, AssembledChoice(index))
            if choice.finish_payload is not None:
                if _carries_nothing(entry) or repeats_finish(entry, choice.finish_reason):
                    continue
                raise Unassemblable(f"choice {index} has a chunk after its finish chunk")
            choice.texts.append(text)
            choice.payloads.append(payload)
            _add_logprobs(choice, entry.get("logprobs"))
            token = entry.get("token")
            if isinstance(token, int) and choice.tokens is not None:
                choice.tokens.append(token)
            elif "token" in entry and token is not None:
                choice.tokens = None
            if is_finish(entry.get("finish_reason")):
                choice.finish_reason = entry["finish_reason"]
                choice.finish_payload = payload
    missing = sorted(set(range(expected)) - set(assembled))
    if missing:
        raise Unassemblable(f"no chunk for choice indices {missing}")
    unfinished = sorted(i for i, c in assembled.items() if c.finish_payload is None)
    if unfinished:
        raise Unassemblable(f"choices {unfinished} have no finish chunk")
    return dict(sorted(assembled.items()))


def response_choices(body: dict[str, JSON], expected: int) -> dict[int, dict[str, JSON]]:
    """The choices of a non-streamed body by index; raises :class:`Unassemblable`."""
    entries = body.get("choices")
    if not isinstance(entries, list):
        raise Unassemblable("the body has no choices array")
    found: dict[int, dict[str, JSON]] = {}
    for entry in entries:
        if not isinstance(entry, dict):
            raise Unassemblable("a choice is not an object")
        index = entry.get("index")
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < expected:
            raise Unassemblable(f"choice index {index!r} is outside 0..{expected - 1}")
        if index in found:
            raise Unassemblable(f"choice index {index} appears twice")
        found[index] = entry
    if len(found) != expected:
        raise Unassemblable(f"{len(found)} choices where {expected} were expected")
    return dict(sorted(found.items()))
