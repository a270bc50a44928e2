"""FriendliAI's structured outputs: the text honours ``response_format``.

Spec: ``ResponseFormat`` in ``spec/completions.yaml`` and FriendliAI's dedicated completions
API, ``response_format`` (``json_object``, ``json_schema``, ``regex``). An output that ended by
``length`` is judged as a prefix: it must be able to become a valid output (an object starts
with ``{``; a regex output is a prefix of a match), so a cut answer is judged too, never
skipped, and a server that ignores the format fails either way.
"""

from __future__ import annotations

import json
import re

import jsonschema

from conformance.model import Violation
from conformance.probes.structured import MAX_TOKENS, PATTERN, PATTERN_PREFIX, SCHEMA
from conformance.run.check_context import CheckContext
from conformance.views import compact
from conformance.wire_json import parse_json

from .base import API, FRIENDLI_WIRE, MUST, SCHEMAS, rule
from .common import choice_of, text_of, usage_numbers

FORMAT = f"{SCHEMAS}/ResponseFormat"
PROBE = "structured-outputs"
FAULTS = ("response-format-ignored",)


def _output(ctx: CheckContext, key: str) -> tuple[str, bool, dict]:
    """The choice's text, whether it was cut by the token limit, and the choice.

    Cut means ``finish_reason: length``, or all of ``max_tokens`` spent (by ``usage``): a
    finish_reason that calls such a cut ``stop`` is FINISH-001's to judge, not a reason to
    read a cut text as a complete one.
    """
    choice = choice_of(ctx, PROBE, key)
    numbers = usage_numbers(ctx.response(PROBE, key).get("usage"))
    spent = numbers is not None and numbers[1] >= MAX_TOKENS
    cut = choice.get("finish_reason") == "length" or spent
    return text_of(choice, f"{PROBE}/{key}"), cut, choice


def _fail(message: str, key: str, text: str, expected: str, choice: dict) -> Violation:
    return Violation(message, expected=expected, actual=text, path="choices[0].text",
                     exchange=f"{PROBE}/{key}", evidence=compact(choice))


def _starts_an_object(text: str) -> bool:
    """Whether ``text`` can still become a JSON object: JSON whitespace, then ``{`` or nothing
    yet (a grammar may let a model spend its tokens on leading whitespace)."""
    rest = text.lstrip(" \t\n\r")
    return rest == "" or rest.startswith("{")


def _object(text: str) -> object:
    try:
        return parse_json(text)
    except ValueError:
        return None


@rule(
    "FRIENDLI-007", MUST, "json_object output is one JSON object",
    requirement="With response_format json_object, the text parses as one JSON object (cut by "
    "length: what it holds can still become one).",
    citation=f"{FORMAT}; FriendliAI dedicated completions API, response_format",
    source=API, probes=(PROBE,), traits=FRIENDLI_WIRE, features=("response_format",),
    faults=FAULTS,
)
def json_object_output(ctx: CheckContext) -> None:
    text, cut, choice = _output(ctx, "json_object")
    if cut and _starts_an_object(text):
        return
    if not cut and isinstance(_object(text), dict):
        return
    raise _fail("the json_object output is not one JSON object", "json_object", text,
                "a JSON object" + (" (its start, cut by length)" if cut else ""), choice)


@rule(
    "FRIENDLI-008", MUST, "json_schema output validates against the schema",
    requirement="With response_format json_schema, the text is a JSON object valid for the "
    "given schema (cut by length: what it holds can still become an object).",
    citation=f"{FORMAT}/properties/json_schema; FriendliAI dedicated completions API, "
    "response_format",
    source=API, probes=(PROBE,), traits=FRIENDLI_WIRE, features=("response_format",),
    faults=FAULTS,
)
def json_schema_output(ctx: CheckContext) -> None:
    text, cut, choice = _output(ctx, "json_schema")
    if cut and _starts_an_object(text):
        return
    value = _object(text) if not cut else None
    if value is not None and jsonschema.Draft202012Validator(SCHEMA).is_valid(value):
        return
    raise _fail("the json_schema output does not validate against the schema", "json_schema",
                text, f"JSON valid for {json.dumps(SCHEMA)}", choice)


@rule(
    "FRIENDLI-009", MUST, "regex output matches the pattern",
    requirement="With response_format regex, the whole text matches the pattern (cut by "
    "length: it is a prefix of a match).",
    citation=f"{FORMAT}/properties/schema; FriendliAI dedicated completions API, "
    "response_format",
    source=API, probes=(PROBE,), traits=FRIENDLI_WIRE, features=("response_format",),
    faults=FAULTS,
)
def regex_output(ctx: CheckContext) -> None:
    text, cut, choice = _output(ctx, "regex")
    if re.fullmatch(PATTERN_PREFIX if cut else PATTERN, text):
        return
    raise _fail("the regex output does not match the pattern", "regex", text,
                f"a full match of {PATTERN}" + (" (a prefix, cut by length)" if cut else ""),
                choice)
