"""Cross-field rules: constraints between request fields that JSON Schema cannot state.

The rules themselves are data, under ``x-cross-field-rules`` in the document (so the mock, the
harness and a reader all see the same list); this module only knows how to evaluate each
``kind``. A field that is absent or ``null`` counts as not given, as everywhere in the contract.

Kinds: ``exactly_one_of``, ``at_most_one_of``, ``all_or_none_of`` (counts of given fields),
``at_least`` (first >= second, when the first is given), ``forbids_when`` (when ``when`` holds,
the first field must take one of ``allowed``), ``requires_value`` (when the first is given,
``requires`` must hold), ``list_length_equals`` (when the first is a list, its length equals the
second field's value), ``valid_json_schema`` and ``regex_without_lookarounds`` (the value at
``path`` inside the first field, when that field matches ``where``, is a valid JSON Schema /
a pattern with no lookahead or lookbehind).

Most rules hold for every profile of a wire; a vendor whose own validation differs narrows a
rule with ``profiles`` (only these profiles) or ``except_profiles`` (all but these), so each
profile judges by its vendor's checks (vLLM's ``stream_options`` rule counts an empty object as
left out, say). ``empty_is_absent: true`` makes ``{}``, ``[]`` and ``""`` count as not given.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import jsonschema

from .document import JSON, extension
from .profiles import get_profile


@dataclass(frozen=True)
class CrossFieldRule:
    """One rule of ``x-cross-field-rules``."""

    id: str
    kind: str
    fields: tuple[str, ...]
    wires: frozenset[str]
    """The wires (a profile's ``wire``) the rule applies to."""
    message: str
    source: str
    options: Mapping[str, JSON]


@dataclass(frozen=True)
class CrossFieldViolation:
    """A broken rule: ``param`` is the field an error envelope should name."""

    rule_id: str
    param: str
    message: str


def _given(request: Mapping[str, JSON], name: str, *, empty_is_absent: bool = False) -> bool:
    value = request.get(name)
    if empty_is_absent and value in ({}, [], ""):
        return False
    return value is not None


def _value(request: Mapping[str, JSON], name: str, defaults: Mapping[str, JSON]) -> JSON:
    value = request.get(name)
    return defaults.get(name) if value is None else value


def _count_given(rule: CrossFieldRule, request: Mapping[str, JSON]) -> int:
    return sum(_given(request, name) for name in rule.fields)


def _exactly_one_of(rule: CrossFieldRule, request: Mapping[str, JSON]) -> bool:
    return _count_given(rule, request) == 1


def _at_most_one_of(rule: CrossFieldRule, request: Mapping[str, JSON]) -> bool:
    return _count_given(rule, request) <= 1


def _all_or_none_of(rule: CrossFieldRule, request: Mapping[str, JSON]) -> bool:
    return _count_given(rule, request) in (0, len(rule.fields))


def _at_least(rule: CrossFieldRule, request: Mapping[str, JSON]) -> bool:
    first, second = rule.fields
    if not _given(request, first):
        return True
    defaults = rule.options.get("defaults", {})
    left, right = _value(request, first, defaults), _value(request, second, defaults)
    if not isinstance(left, (int, float)) or not isinstance(right, (int, float)):
        return True  # a type error is the schema's to report
    return left >= right


def _conditions_hold(request: Mapping[str, JSON], conditions: Mapping[str, JSON]) -> bool:
    return all(request.get(name) == expected for name, expected in conditions.items())


def _forbids_when(rule: CrossFieldRule, request: Mapping[str, JSON]) -> bool:
    if not _conditions_hold(request, rule.options["when"]):
        return True
    allowed = rule.options["allowed"]
    return all(request.get(name) in values for name, values in allowed.items())


def _requires_value(rule: CrossFieldRule, request: Mapping[str, JSON]) -> bool:
    if not _given(request, rule.fields[0],
                  empty_is_absent=bool(rule.options.get("empty_is_absent"))):
        return True
    return _conditions_hold(request, rule.options["requires"])


def _list_length_equals(rule: CrossFieldRule, request: Mapping[str, JSON]) -> bool:
    first, second = rule.fields
    value = request.get(first)
    if not isinstance(value, list):
        return True
    expected = _value(request, second, rule.options.get("defaults", {}))
    if isinstance(expected, float) and expected.is_integer():
        expected = int(expected)  # JSON Schema counts 2.0 as the integer 2
    return not isinstance(expected, int) or isinstance(expected, bool) or len(value) == expected


def _nested(rule: CrossFieldRule, request: Mapping[str, JSON]) -> JSON:
    """The value at ``path`` inside the first field, when that field matches ``where``."""
    value = request.get(rule.fields[0])
    if not isinstance(value, Mapping) or not _conditions_hold(value, rule.options.get("where",
                                                                                      {})):
        return None
    path: Sequence[str] = rule.options["path"]
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def _valid_json_schema(rule: CrossFieldRule, request: Mapping[str, JSON]) -> bool:
    schema = _nested(rule, request)
    if not isinstance(schema, (dict, bool)):
        return True  # absent, or a type error: the schema's to report
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError:
        return False
    return True


LOOKAROUNDS = ("(?=", "(?!", "(?<=", "(?<!")


def has_lookaround(pattern: str) -> bool:
    """Whether ``pattern`` opens a lookahead or lookbehind group (escapes and character
    classes are skipped: ``\\(?=`` and ``[(?=]`` are literal characters)."""
    position, in_class = 0, False
    while position < len(pattern):
        char = pattern[position]
        if char == "\\":
            position += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if pattern.startswith("]", position + 1) or pattern.startswith("^]", position + 1):
                position += 2 if pattern[position + 1] == "]" else 3  # a leading ] is literal
                continue
        elif pattern.startswith(LOOKAROUNDS, position):
            return True
        position += 1
    return False


def _regex_without_lookarounds(rule: CrossFieldRule, request: Mapping[str, JSON]) -> bool:
    pattern = _nested(rule, request)
    return not isinstance(pattern, str) or not has_lookaround(pattern)


_KINDS: dict[str, Callable[[CrossFieldRule, Mapping[str, JSON]], bool]] = {
    "exactly_one_of": _exactly_one_of,
    "at_most_one_of": _at_most_one_of,
    "all_or_none_of": _all_or_none_of,
    "at_least": _at_least,
    "forbids_when": _forbids_when,
    "requires_value": _requires_value,
    "list_length_equals": _list_length_equals,
    "valid_json_schema": _valid_json_schema,
    "regex_without_lookarounds": _regex_without_lookarounds,
}


@functools.cache
def cross_field_rules() -> tuple[CrossFieldRule, ...]:
    """Every rule of the document, validated: an unknown kind is an error at load time."""
    rules = []
    for raw in extension("x-cross-field-rules") or []:
        if raw["kind"] not in _KINDS:
            raise ValueError(f"cross-field rule {raw['id']!r} has unknown kind {raw['kind']!r}")
        standard = {"id", "kind", "fields", "wires", "message", "source"}
        rules.append(
            CrossFieldRule(
                id=raw["id"],
                kind=raw["kind"],
                fields=tuple(raw["fields"]),
                wires=frozenset(raw["wires"]),
                message=raw["message"],
                source=raw["source"],
                options={k: v for k, v in raw.items() if k not in standard},
            )
        )
    return tuple(rules)


def cross_field_violations(
    request: Mapping[str, JSON], profile_name: str
) -> list[CrossFieldViolation]:
    """The cross-field rules of the profile ``profile_name`` (a shipped profile's name or a
    profile file; its wire's rules) that ``request`` breaks, in document order.

    Call it on a request that already passed the profile's request schema.
    """
    return [
        CrossFieldViolation(rule.id, rule.fields[0], rule.message)
        for rule in cross_field_rules_for(profile_name)
        if not _KINDS[rule.kind](rule, request)
    ]


def cross_field_rules_for(profile_name: str) -> tuple[CrossFieldRule, ...]:
    """The cross-field rules that apply to the profile ``profile_name``: those of its wire,
    narrowed by a rule's ``profiles`` / ``except_profiles``."""
    profile = get_profile(profile_name)
    return tuple(rule for rule in cross_field_rules() if _applies(rule, profile.wire,
                                                                     profile.name))


def _applies(rule: CrossFieldRule, wire: str, name: str) -> bool:
    only = rule.options.get("profiles")
    excepted = rule.options.get("except_profiles") or []
    return (wire in rule.wires and (not isinstance(only, list) or name in only)
            and not (isinstance(excepted, list) and name in excepted))
