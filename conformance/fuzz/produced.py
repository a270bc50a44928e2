"""What the server produces: one greedy exchange at the start of a run, for the stop strings.

A stop string drawn from a fixed list (``" the"``, ``"e"``) may never occur in what a model
writes, and then no rule about stop strings judges anything: a server that leaks them passes.
So a run first asks the server for one greedy completion (``temperature: 0``, the run's
``max_tokens``) of :data:`KNOWN_TOKENS`, a token-id prompt, echoed when the profile claims
``echo``, so the answer spells both how the server decodes those ids and what it writes after
them (a text prompt, :data:`KNOWN_TEXT`, where token-id prompts or echo are not claimed). The
fuzzer then draws stop strings from pieces of that text
(:func:`conformance.strategies.completion_requests`' ``texts``) and sends the same prompt
again, often: streamed with echo off and a stop string from the echoed prompt, a server that
leaks the prompt into the stream (``mockserver --fault prompt-leak-stream``) shows the stop
string in the stream's text, which STOP-001 judges.

The exchange goes through the run's guard (it takes one unit of the request budget) and is
not judged: it is the fuzzer's own baseline, not a case. A server that does not answer it
leaves the run with the fixed stop strings.
"""

from __future__ import annotations

from dataclasses import dataclass

import schemathesis

from conformance.run.settings import Settings
from conformance.wire_json import parse_json
from spec import JSON

KNOWN_TOKENS = [84, 104, 101, 32, 108, 105, 115, 116, 32, 111, 102]
"""A token-id prompt below 256 (every byte-level vocabulary has the ids; on a byte-level BPE
they spell "The list of")."""
KNOWN_TEXT = "The list of"
"""The text prompt where the server does not claim token-id prompts."""


@dataclass(frozen=True)
class Produced:
    """The first greedy exchange's prompt and the text that came back (empty: none came)."""

    prompt: JSON
    text: str = ""
    field: str = "prompt"
    """Where the prompt goes: ``prompt``, or FriendliAI's ``tokens``."""

    @property
    def texts(self) -> tuple[str, ...]:
        return (self.text,) if self.text else ()


def baseline_body(settings: Settings, max_tokens: int) -> tuple[dict[str, JSON], Produced]:
    """The greedy request, and what it asks (its answer still to come)."""
    profile = settings.profile
    body: dict[str, JSON] = {"model": settings.model, "max_tokens": max_tokens,
                             "temperature": 0}
    if settings.claims("token_prompts"):
        produced = Produced(list(KNOWN_TOKENS))
        if settings.claims("echo"):
            body["echo"] = True
    elif "tokens" in profile.request_fields and settings.claims("tokens_prompt"):
        produced = Produced(list(KNOWN_TOKENS), field="tokens")
    else:
        produced = Produced(KNOWN_TEXT)
    body[produced.field] = produced.prompt
    return body, produced


def ask(operation: schemathesis.APIOperation, settings: Settings, max_tokens: int,
        headers: dict[str, str]) -> Produced:
    """Send the greedy request on ``operation`` (a guarded schema's completions operation);
    what came back. Network failures and budgets propagate as the guard raises them."""
    body, produced = baseline_body(settings, max_tokens)
    case = operation.Case(body=body, media_type="application/json")
    response = case.call(headers=headers)
    if response.status_code != 200:
        return produced
    try:
        answer = parse_json(response.content)  # bounded: a hostile body is no crash here
    except ValueError:
        return produced
    choices = answer.get("choices") if isinstance(answer, dict) else None
    first = choices[0] if isinstance(choices, list) and choices else None
    text = first.get("text") if isinstance(first, dict) else None
    return Produced(produced.prompt, text, produced.field) if isinstance(text, str) else produced
