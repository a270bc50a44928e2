"""Parsing JSON the server sent: one parser, bounded in nesting depth.

RFC 8259 §9: "An implementation may set limits on the maximum depth of nesting." Python's
parser has one it does not name: a body nested 100,000 deep (``[[[[...]]]]``) makes
``json.loads`` raise :class:`RecursionError`, which is no :class:`ValueError`, so every reader
that expected "not JSON" broke instead. Every read of the server's bytes goes through
:func:`parse_json`, which refuses such a text with :class:`TooDeep` (a ``ValueError``): the
server's deviation, judged by the rule that judges the body (SCHEMA-001 for a response, SSE-004
for a stream event), never a harness error.
"""

from __future__ import annotations

import json
import re

from spec import JSON

MAX_JSON_DEPTH = 100
"""The deepest nesting read. A completion body nests about six levels (``choices``,
``logprobs``, ``top_logprobs``); a hundred leaves room for any structured output while the
checks that walk a value (schema validation, ``json.dumps``) stay far from Python's recursion
limit."""

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
"""A JSON string (written unrolled, so it never backtracks more than linearly)."""
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


class TooDeep(ValueError):
    """The text nests arrays and objects deeper than :data:`MAX_JSON_DEPTH`."""

    def __init__(self) -> None:
        super().__init__(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")


def nesting_depth(text: str) -> int:
    """How deep ``text`` nests arrays and objects, brackets inside strings aside; it stops
    counting past :data:`MAX_JSON_DEPTH`."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    level = deepest = 0
    for char in brackets:
        level += 1 if char in "[{" else -1
        if level > deepest:
            deepest = level
            if deepest > MAX_JSON_DEPTH:
                break
    return deepest


def parse_json(data: str | bytes) -> JSON:
    """``data`` parsed; ValueError when it is not JSON, :class:`TooDeep` when it nests deeper
    than :data:`MAX_JSON_DEPTH`. The depth is measured only when there are that many opening
    brackets at all, so an ordinary body costs two ``count`` calls more."""
    if isinstance(data, bytes):
        openers = data.count(b"[") + data.count(b"{")
    else:
        openers = data.count("[") + data.count("{")
    if openers > MAX_JSON_DEPTH:
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        if nesting_depth(text) > MAX_JSON_DEPTH:
            raise TooDeep
    try:
        value: JSON = json.loads(data)
    except RecursionError:  # the limit above should come first; this is its backstop
        raise TooDeep from None
    return value
