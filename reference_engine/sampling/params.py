"""Request-level sampling parameters: one frozen, validated, hashable value per request.

``SamplingParams`` holds every OpenAI and FriendliAI knob that changes which token is picked
(and vLLM's ``allowed_token_ids``), with the APIs' defaults, so that "all defaults" can be
recognised in O(1) on the hot path (``has_logit_processors`` and ``truncates`` are computed once
here). Values are validated eagerly in ``__post_init__``; errors name the field and the value.
Containers are normalised to immutable types (``FrozenMap`` for ``logit_bias``, tuples for
``bad_word_tokens`` and ``allowed_token_ids``) so a params object can be shared between
choices, threads and caches.

``response_format`` is stored as its ``type`` string and ``response_schema`` as the schema that
goes with it: for ``json_schema`` the JSON Schema (a mapping, or its JSON text; stored as
text), for ``regex`` the pattern; ``text`` and ``json_object`` take none. All three constrained
formats are enforced token by token through llguidance (``response_format`` builds the grammar,
``grammar`` applies it); a schema or pattern that cannot be enforced is an
:class:`InvalidParameter` naming ``response_format``, raised here, before any generation.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from .allowed_tokens import EMPTY_MESSAGE
from .errors import InvalidParameter, WrongParameterType
from .response_format import grammar, schema_text

GREEDY_BELOW = 1e-5
HUGE_REPETITION_PENALTY = 1e250
"""Above this, a penalised logit divided by a sampled temperature (>= ``GREEDY_BELOW``) can
leave the float range: logits are at most ~1e4 in magnitude (logprobs, biases, penalties), so
below it ``|logit| * penalty / temperature`` stays under ~1e259."""
RESPONSE_FORMAT_TYPES = ("text", "json_object", "json_schema", "regex")
JSON_RESPONSE_FORMATS = frozenset({"json_object", "json_schema"})
CONSTRAINED_RESPONSE_FORMATS = frozenset({"json_object", "json_schema", "regex"})
_SCHEMA_FORMATS = frozenset({"json_schema", "regex"})


def _root(name: str) -> str:
    return name.split("[", 1)[0]


class FrozenMap(Mapping[int, float]):
    """An immutable, hashable ``{token_id: bias}`` mapping, iterated in ascending id order."""

    __slots__ = ("_data", "_hash")

    def __init__(self, items: Mapping[int, float] | None = None) -> None:
        self._data: dict[int, float] = dict(sorted((items or {}).items()))
        self._hash: int | None = None

    def __getitem__(self, key: int) -> float:
        return self._data[key]

    def __iter__(self) -> Iterator[int]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(tuple(self._data.items()))
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return dict(self._data) == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenMap({self._data!r})"


def _number(name: str, value: object, lo: float, hi: float, *, lo_open: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise WrongParameterType(_root(name), f"{name} must be a number, got {value!r}")
    number = float(value)
    too_low = number <= lo if lo_open else number < lo
    if math.isnan(number) or too_low or number > hi:
        left = "(" if lo_open else "["
        raise InvalidParameter(
            _root(name), f"{name} must be in {left}{lo:g}, {hi:g}], got {value!r}"
        )
    return number


def _integer(name: str, value: object, lo: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise WrongParameterType(_root(name), f"{name} must be an integer, got {value!r}")
    if value < lo:
        raise InvalidParameter(_root(name), f"{name} must be >= {lo}, got {value!r}")
    return value


def _token_id(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidParameter(
            _root(name), f"{name} must hold non-negative integer token ids, got {value!r}"
        )
    return value


def _logit_bias(value: object) -> FrozenMap:
    if not isinstance(value, Mapping):
        raise WrongParameterType(
            "logit_bias", f"logit_bias must be a mapping of token id to bias, got {value!r}"
        )
    items: dict[int, float] = {}
    for key, bias in value.items():
        token = _token_id("logit_bias", key)
        items[token] = _number(f"logit_bias[{token}]", bias, -100.0, 100.0)
    return FrozenMap(items)


def _bad_word_tokens(value: object) -> tuple[tuple[int, ...], ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise WrongParameterType(
            "bad_word_tokens", f"bad_word_tokens must be a list of token id lists, got {value!r}"
        )
    sequences = []
    for index, seq in enumerate(value):
        if isinstance(seq, (str, bytes)) or not isinstance(seq, Sequence) or not seq:
            raise InvalidParameter(
                "bad_word_tokens",
                f"bad_word_tokens[{index}] must be a non-empty list of token ids, got {seq!r}",
            )
        sequences.append(tuple(_token_id(f"bad_word_tokens[{index}]", t) for t in seq))
    return tuple(sequences)


def _allowed_token_ids(value: object) -> tuple[int, ...] | None:
    """vLLM's whitelist as ascending unique ids (a set: order and repeats mean nothing)."""
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise WrongParameterType(
            "allowed_token_ids", f"allowed_token_ids must be a list of token ids, got {value!r}"
        )
    if not value:
        raise InvalidParameter("allowed_token_ids", EMPTY_MESSAGE)
    return tuple(sorted({_token_id("allowed_token_ids", token) for token in value}))


def _response_format(value: object) -> str | None:
    if value is None:
        return None
    if value not in RESPONSE_FORMAT_TYPES:
        raise InvalidParameter(
            "response_format",
            f"response_format type must be one of {', '.join(RESPONSE_FORMAT_TYPES)}, "
            f"got {value!r}",
        )
    return str(value)


def _response_schema(kind: str | None, schema: object) -> str | None:
    """The schema stored for ``kind`` (see the module docstring), its grammar checked."""
    if kind not in _SCHEMA_FORMATS:
        if schema is not None:
            raise InvalidParameter(
                "response_format",
                f"response_format {kind!r} takes no schema, got {schema!r}",
            )
        if kind == "json_object":
            grammar(kind, None)
        return None
    if schema is None:
        raise InvalidParameter("response_format", f"response_format {kind!r} needs a schema")
    if kind == "regex":
        if not isinstance(schema, str):
            raise WrongParameterType(
                "response_format", f"response_format regex schema must be a string, got {schema!r}"
            )
        text = schema
    else:
        text = schema_text(schema)
    grammar(kind, text)
    return text


@dataclass(frozen=True)
class SamplingParams:
    """Every request parameter that changes which token is picked, validated and immutable.

    The engine's own types, no wire forms (the mock server's wire layer turns request JSON
    into these keywords): ``response_format`` is ``None`` or a type string, ``response_schema``
    its schema (see the module docstring); ``logit_bias`` any
    int-keyed mapping, stored as a ``FrozenMap``; ``bad_word_tokens`` any list of non-empty id
    lists, stored as tuples; ``allowed_token_ids`` None (every token) or a non-empty list of
    ids, stored as an ascending tuple without repeats. A value outside its domain raises
    :class:`InvalidParameter` (:class:`WrongParameterType` for a wrong type) naming the
    parameter.
    """

    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    min_p: float = 0.0
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    repetition_penalty: float = 1.0
    no_repeat_ngram: int = 1
    logit_bias: Mapping[int, float] = field(default_factory=FrozenMap)
    bad_word_tokens: tuple[tuple[int, ...], ...] = ()  # lists are accepted and converted
    min_tokens: int = 0
    xtc_threshold: float = 0.0
    xtc_probability: float = 0.0
    response_format: str | None = None
    response_schema: str | Mapping[str, object] | None = None  # a mapping is stored as JSON text
    allowed_token_ids: tuple[int, ...] | None = None  # vLLM's whitelist; stored sorted, unique
    # Derived once in __post_init__ so the hot path can skip everything with two lookups:
    # a logit processor other than min_tokens (which depends on the step) is on; the
    # response_format grammar is the only one; a truncation filter is on.
    has_logit_processors: bool = field(init=False, repr=False, compare=False)
    grammar_only: bool = field(init=False, repr=False, compare=False)
    truncates: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        put = object.__setattr__
        put(self, "temperature", _number("temperature", self.temperature, 0.0, 2.0))
        put(self, "top_p", _number("top_p", self.top_p, 0.0, 1.0, lo_open=True))
        put(self, "top_k", _integer("top_k", self.top_k, 0))
        put(self, "min_p", _number("min_p", self.min_p, 0.0, 1.0))
        for name in ("presence_penalty", "frequency_penalty"):
            put(self, name, _number(name, getattr(self, name), -2.0, 2.0))
        put(
            self,
            "repetition_penalty",
            _number("repetition_penalty", self.repetition_penalty, 0.0, math.inf, lo_open=True),
        )
        if math.isinf(self.repetition_penalty):
            raise InvalidParameter(
                "repetition_penalty",
                f"repetition_penalty must be finite, got {self.repetition_penalty!r}",
            )
        put(self, "no_repeat_ngram", _integer("no_repeat_ngram", self.no_repeat_ngram, 1))
        put(self, "logit_bias", _logit_bias(self.logit_bias))
        put(self, "bad_word_tokens", _bad_word_tokens(self.bad_word_tokens))
        put(self, "min_tokens", _integer("min_tokens", self.min_tokens, 0))
        put(self, "xtc_threshold", _number("xtc_threshold", self.xtc_threshold, 0.0, 1.0))
        put(self, "xtc_probability", _number("xtc_probability", self.xtc_probability, 0.0, 1.0))
        put(self, "response_format", _response_format(self.response_format))
        put(self, "response_schema", _response_schema(self.response_format, self.response_schema))
        put(self, "allowed_token_ids", _allowed_token_ids(self.allowed_token_ids))
        edits_logits = self._edits_logits
        put(self, "has_logit_processors", edits_logits or self.constrained)
        put(self, "grammar_only", self.constrained and not edits_logits)
        put(
            self,
            "truncates",
            self.top_k > 0 or self.top_p < 1.0 or self.min_p > 0.0 or self.xtc_active,
        )

    @property
    def _edits_logits(self) -> bool:
        """A logit processor other than the grammar and min_tokens is on (bias, bad words,
        n-gram blocking, penalties, the whitelist): the one list both derived flags read."""
        return bool(
            self.logit_bias
            or self.bad_word_tokens
            or self.no_repeat_ngram > 1
            or self.repetition_penalty != 1.0
            or self.presence_penalty != 0.0
            or self.frequency_penalty != 0.0
            or self.allowed_token_ids is not None
        )

    @property
    def greedy(self) -> bool:
        """Temperature below ``GREEDY_BELOW`` (0 included): pick the argmax (ties: lowest id);
        no random draw is made. Dividing logits by a temperature that small would overflow,
        and its distribution is the argmax anyway (vLLM draws the same line)."""
        return self.temperature < GREEDY_BELOW

    @property
    def scale_can_overflow(self) -> bool:
        """Whether dividing the processed logprobs by the temperature may overflow (a
        ``repetition_penalty`` above ``HUGE_REPETITION_PENALTY``): the sampler then computes
        its weights with overflow allowed, to the limits it means (``-inf``, weight 0)."""
        return self.repetition_penalty > HUGE_REPETITION_PENALTY

    @property
    def xtc_active(self) -> bool:
        """XTC runs (one RNG trial per sampled step) only when both of its knobs are > 0."""
        return self.xtc_threshold > 0.0 and self.xtc_probability > 0.0

    @property
    def json_object(self) -> bool:
        """The output is constrained to one JSON object (``json_object`` or ``json_schema``)."""
        return self.response_format in JSON_RESPONSE_FORMATS

    @property
    def constrained(self) -> bool:
        """The output is held to a grammar (``json_object``, ``json_schema`` or ``regex``)."""
        return self.response_format in CONSTRAINED_RESPONSE_FORMATS

