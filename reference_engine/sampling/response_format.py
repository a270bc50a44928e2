"""``response_format``: from FriendliAI's three formats to one llguidance grammar each.

FriendliAI's dedicated completions take ``{"type": "json_object"}``, ``{"type": "json_schema",
"json_schema": {"schema": {...}}}`` and ``{"type": "regex", "schema": "..."}`` (``text`` is no
constraint). The engine gets the type string and the schema (``SamplingParams.response_format``
and ``response_schema``); this module turns them into the llguidance grammar the sampler
enforces (``grammar``) and rejects what cannot be enforced, as
:class:`~reference_engine.sampling.params.InvalidParameter` naming ``response_format``:

* ``json_object``: one JSON object (RFC 8259), optionally surrounded by whitespace; each run
  of whitespace outside strings is at most ``JSON_MAX_WHITESPACE`` bytes and nesting is at
  most ``JSON_MAX_DEPTH`` levels, so a model that loves newlines cannot stall and
  ``json.loads`` never recurses deeply. A Lark grammar, written out level by level (Lark has
  no depth counter). This is the language the engine's hand-written recognizer accepted before
  llguidance, byte for byte, so json_object outputs did not change.
* ``json_schema``: the schema must be a valid JSON Schema (Draft 2020-12 meta-schema) that
  llguidance can compile (FriendliAI documents the subset: ``type`` object / array / string /
  number / integer / boolean / null, ``properties``, ``required``, ``enum``, ``items``, ...;
  an unsatisfiable or unsupported one is an invalid parameter). The output is compact JSON
  with ``", "`` and ``": "`` separators and no other whitespace: no whitespace to stall in.
* ``regex``: the pattern in the Rust ``regex`` syntax llguidance uses, which has neither
  lookarounds nor back-references (FriendliAI's documented subset); the output must match it
  whole.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache

import llguidance

from .errors import InvalidParameter

JSON_MAX_WHITESPACE = 32
JSON_MAX_DEPTH = 32
JSON_SCHEMA_OPTIONS: dict[str, object] = {
    "whitespace_flexible": False,
    "item_separator": ", ",
    "key_separator": ": ",
}
"""llguidance's JSON compiler options for ``json_schema``; a schema's own ``x-guidance``
cannot override them (they are passed as overrides)."""

_JSON_TERMINALS = (
    r'STRING: /"([^"\\\x00-\x1f]|\\(["\\\/bfnrt]|u[0-9a-fA-F]{4}))*"/',
    r"NUMBER: /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/",
)


def json_object_lark(
    *, max_whitespace: int = JSON_MAX_WHITESPACE, max_depth: int = JSON_MAX_DEPTH
) -> str:
    """The Lark grammar of ``json_object`` (see the module docstring).

    One optional ``WS`` between any two structural tokens, never two in a row, so the bound
    holds per run; ``value_d`` may open a container only while ``d < max_depth``.
    """
    if max_whitespace < 1 or max_depth < 1:
        raise ValueError(f"bounds must be >= 1, got {max_whitespace!r} and {max_depth!r}")
    whitespace = f"WS: /[ \\t\\n\\r]{{1,{max_whitespace}}}/"
    rules = ["start: WS? object_1 WS?", whitespace, *_JSON_TERMINALS]
    for depth in range(1, max_depth + 1):
        values = ["STRING", "NUMBER", '"true"', '"false"', '"null"']
        if depth < max_depth:
            values += [f"object_{depth + 1}", f"array_{depth + 1}"]
        rules += [
            f"value_{depth}: " + " | ".join(values),
            f'object_{depth}: "{{" WS? "}}" '
            f'| "{{" WS? pair_{depth} (WS? "," WS? pair_{depth})* WS? "}}"',
            f'pair_{depth}: STRING WS? ":" WS? value_{depth}',
            f'array_{depth}: "[" WS? "]" '
            f'| "[" WS? value_{depth} (WS? "," WS? value_{depth})* WS? "]"',
        ]
    return "\n".join(rules)


def schema_text(schema: object) -> str:
    """A JSON Schema as the JSON text the engine stores (key order kept: it is output order).

    A str is taken as JSON text already; a mapping is serialised. Anything else, or text that
    is not a JSON object, is an invalid ``response_format``.
    """
    if isinstance(schema, str):
        try:
            value = json.loads(schema)
        except ValueError as error:
            raise InvalidParameter(
                "response_format", f"response_format json_schema is not JSON: {error}"
            ) from None
    else:
        value = schema
    if not isinstance(value, Mapping):
        raise InvalidParameter(
            "response_format",
            f"response_format json_schema.schema must be a JSON object, got {schema!r}",
        )
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def grammar(kind: str, schema: str | None) -> str:
    """The llguidance grammar for a validated ``(type, schema)``; InvalidParameter if none.

    ``kind`` is ``json_object``, ``json_schema`` (``schema``: JSON text) or ``regex``
    (``schema``: the pattern). Cached: a request's params are rebuilt a few times.
    """
    return _grammar(kind, schema)


@lru_cache(maxsize=256)
def _grammar(kind: str, schema: str | None) -> str:
    if kind == "json_object":
        text = llguidance.LLMatcher.grammar_from_lark(json_object_lark())
    elif kind == "json_schema" and schema is not None:
        import jsonschema  # 60 ms to import: paid by the first json_schema, not by every start

        value = json.loads(schema)
        try:
            jsonschema.Draft202012Validator.check_schema(value)
        except jsonschema.SchemaError as error:
            raise InvalidParameter(
                "response_format",
                f"response_format json_schema.schema is not a valid JSON Schema: "
                f"{error.message}",
            ) from None
        text = llguidance.LLMatcher.grammar_from_json_schema(
            schema, overrides=JSON_SCHEMA_OPTIONS  # type: ignore[arg-type]
        )
    elif kind == "regex" and schema is not None:
        text = llguidance.LLMatcher.grammar_from_regex(schema)
    else:
        raise InvalidParameter(
            "response_format", f"response_format {kind!r} has no grammar (schema {schema!r})"
        )
    problem = llguidance.LLMatcher.validate_grammar(text)
    if problem:
        what = "json_schema.schema" if kind == "json_schema" else "schema"
        raise InvalidParameter(
            "response_format",
            f"response_format {what} cannot be enforced: {_first_line(problem)}",
        )
    return text


def _first_line(message: str) -> str:
    """llguidance's messages carry the grammar after the first lines; keep what says why."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    reason = next((line for line in lines if line.startswith("error:")), None)
    head = lines[0] if lines else message
    return head if reason is None else f"{head} ({reason})"
