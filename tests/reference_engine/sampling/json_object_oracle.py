"""Test oracle: an incremental byte-level recognizer for "one JSON object" (RFC 8259).

The engine's json_object constraint was this recognizer until llguidance took over; it stays
here, plainly written, as the definition the llguidance grammar
(``reference_engine.sampling.response_format.json_object_lark``) is compared with, token by
token (``test_sampling_grammar``).

Byte-level, not str-level, because tokens are byte strings and one may split a UTF-8
character. Bytes >= 0x80 are legal only inside strings, and there only as well-formed UTF-8
(no overlongs, surrogates or code points above U+10FFFF), so a complete document always decodes
and ``json.loads`` accepts it. Control bytes < 0x20 are illegal inside strings, as in JSON.

The state is an immutable tuple ``(mode, stack, aux)``: copying is free, equal states compare
and hash equal (``json_object`` caches token masks by state). ``stack`` is a str of open
containers (``"{"``/``"["``), ``aux`` a small int whose meaning depends on the mode: the
current whitespace run outside strings, the pending UTF-8 continuation inside strings, the
hex digits still due in ``\\uXXXX``, the literal and position inside ``true``/``false``/``null``.

Every state the recognizer can reach can still be completed to a valid document, so
generation never dead-ends in the grammar. Two bounds keep generation moving:
``max_whitespace`` limits each run of whitespace outside strings (so a model that loves
newlines cannot stall: after the run only a structural byte, or EOS when complete, is
allowed) and ``max_depth`` limits nesting (``json.loads`` recurses per level).
"""

from __future__ import annotations

# Structural modes (outside strings); aux = length of the current whitespace run.
START, OBJ_FIRST, OBJ_NEXT, COLON, VALUE, ARR_FIRST, AFTER, DONE = range(8)
# String modes; KEY/VAL say where a closing quote leads. aux = pending UTF-8 (see _utf8_lead).
STR_KEY, STR_VAL, ESC_KEY, ESC_VAL, HEX_KEY, HEX_VAL = range(8, 14)
LIT = 14  # aux = literal index * 8 + bytes matched
NUM_MINUS, NUM_ZERO, NUM_INT, NUM_DOT, NUM_FRAC, NUM_E, NUM_ESIGN, NUM_EXP = range(15, 23)

JsonState = tuple[int, str, int]
INITIAL_STATE: JsonState = (START, "", 0)

WHITESPACE = frozenset(b" \t\n\r")
_DIGITS = frozenset(b"0123456789")
_HEX = frozenset(b"0123456789abcdefABCDEF")
_ESCAPES = frozenset(b'"\\/bfnrt')
_LITERALS = (b"true", b"false", b"null")
_LITERAL_START = {ord("t"): 0, ord("f"): 1, ord("n"): 2}
# Allowed range of the next UTF-8 continuation byte, by code (aux & 7), per RFC 3629.
_CONT_RANGE = ((0x80, 0xBF), (0xA0, 0xBF), (0x80, 0x9F), (0x90, 0xBF), (0x80, 0x8F))
_NUM_TERMINAL = frozenset({NUM_ZERO, NUM_INT, NUM_FRAC, NUM_EXP})
_STRUCTURAL = frozenset({START, OBJ_FIRST, OBJ_NEXT, COLON, VALUE, ARR_FIRST, AFTER, DONE})

DEFAULT_MAX_WHITESPACE = 32
DEFAULT_MAX_DEPTH = 32


def _utf8_lead(byte: int) -> int:
    """aux for a string after UTF-8 lead ``byte``: remaining * 8 + range code; -1 if illegal."""
    if 0xC2 <= byte <= 0xDF:
        return 8
    if byte == 0xE0:
        return 16 + 1
    if byte == 0xED:
        return 16 + 2
    if 0xE1 <= byte <= 0xEF:
        return 16
    if byte == 0xF0:
        return 24 + 3
    if byte == 0xF4:
        return 24 + 4
    if 0xF1 <= byte <= 0xF3:
        return 24
    return -1


def is_complete(state: JsonState) -> bool:
    """True once the top-level object is closed (only whitespace and EOS may follow)."""
    return state[0] == DONE


def is_plain_string(state: JsonState) -> bool:
    """Inside a string, at a character boundary, not in an escape: any string-safe byte fits."""
    return (state[0] == STR_KEY or state[0] == STR_VAL) and state[2] == 0


class JsonGrammar:
    """The recognizer, parameterised by its two bounds. Stateless: states are plain tuples."""

    __slots__ = ("max_depth", "max_whitespace")

    def __init__(
        self, *, max_whitespace: int = DEFAULT_MAX_WHITESPACE, max_depth: int = DEFAULT_MAX_DEPTH
    ) -> None:
        if max_whitespace < 0:
            raise ValueError(f"max_whitespace must be >= 0, got {max_whitespace!r}")
        if max_depth < 1:
            raise ValueError(f"max_depth must be >= 1, got {max_depth!r}")
        self.max_whitespace = max_whitespace
        self.max_depth = max_depth

    def advance(self, state: JsonState | None, data: bytes) -> JsonState | None:
        """The state after ``data``, or None if ``data`` makes the output an invalid prefix."""
        step = self.step
        for byte in data:
            if state is None:
                return None
            state = step(state, byte)
        return state

    def step(self, state: JsonState, byte: int) -> JsonState | None:
        """The state after one byte, or None."""
        mode, stack, aux = state
        if mode == STR_VAL or mode == STR_KEY:  # the hot path: string content
            if aux:
                lo, hi = _CONT_RANGE[aux & 7]
                if not lo <= byte <= hi:
                    return None
                return (mode, stack, ((aux >> 3) - 1) << 3) if aux >= 16 else (mode, stack, 0)
            if byte == 0x22:  # closing quote
                return (COLON, stack, 0) if mode == STR_KEY else (AFTER, stack, 0)
            if byte == 0x5C:
                return (mode + 2, stack, 0)
            if byte < 0x20:
                return None
            if byte < 0x80:
                return state
            lead = _utf8_lead(byte)
            return None if lead < 0 else (mode, stack, lead)
        if NUM_MINUS <= mode <= NUM_EXP:
            result = self._number(mode, stack, byte)
            if result is not None:
                return result
            if mode not in _NUM_TERMINAL:
                return None
            mode, aux = AFTER, 0  # the number ended; this byte belongs to what follows it
        if mode in _STRUCTURAL:
            if byte in WHITESPACE:
                return (mode, stack, aux + 1) if aux < self.max_whitespace else None
            return self._structural(mode, stack, byte)
        if mode == ESC_KEY or mode == ESC_VAL:
            if byte in _ESCAPES:
                return (mode - 2, stack, 0)
            return (mode + 2, stack, 4) if byte == 0x75 else None  # \u: four hex digits due
        if mode == HEX_KEY or mode == HEX_VAL:
            if byte not in _HEX:
                return None
            return (mode, stack, aux - 1) if aux > 1 else (mode - 4, stack, 0)
        if mode == LIT:
            literal, matched = _LITERALS[aux >> 3], aux & 7
            if byte != literal[matched]:
                return None
            if matched + 1 == len(literal):
                return (AFTER, stack, 0)
            return (LIT, stack, aux + 1)
        raise ValueError(f"not a JSON recognizer state: {state!r}")

    def _structural(self, mode: int, stack: str, byte: int) -> JsonState | None:
        if mode == AFTER:
            top = stack[-1]
            if byte == 0x2C:  # ,
                return (OBJ_NEXT if top == "{" else VALUE, stack, 0)
            if (byte == 0x7D and top == "{") or (byte == 0x5D and top == "["):
                return self._close(stack)
            return None
        if mode == VALUE or mode == ARR_FIRST:
            if byte == 0x5D and mode == ARR_FIRST:
                return self._close(stack)
            return self._value(stack, byte)
        if mode == OBJ_FIRST or mode == OBJ_NEXT:
            if byte == 0x22:
                return (STR_KEY, stack, 0)
            if byte == 0x7D and mode == OBJ_FIRST:
                return self._close(stack)
            return None
        if mode == COLON:
            return (VALUE, stack, 0) if byte == 0x3A else None
        if mode == START:
            return (OBJ_FIRST, "{", 0) if byte == 0x7B else None
        return None  # DONE: only whitespace

    def _value(self, stack: str, byte: int) -> JsonState | None:
        if byte == 0x22:
            return (STR_VAL, stack, 0)
        if byte == 0x7B or byte == 0x5B:
            if len(stack) >= self.max_depth:
                return None
            return (OBJ_FIRST, stack + "{", 0) if byte == 0x7B else (ARR_FIRST, stack + "[", 0)
        if byte in _DIGITS:
            return (NUM_ZERO if byte == 0x30 else NUM_INT, stack, 0)
        if byte == 0x2D:
            return (NUM_MINUS, stack, 0)
        literal = _LITERAL_START.get(byte)
        return None if literal is None else (LIT, stack, literal * 8 + 1)

    @staticmethod
    def _close(stack: str) -> JsonState:
        rest = stack[:-1]
        return (AFTER, rest, 0) if rest else (DONE, "", 0)

    @staticmethod
    def _number(mode: int, stack: str, byte: int) -> JsonState | None:
        """The next number state if ``byte`` continues the number, else None."""
        digit = byte in _DIGITS
        if mode == NUM_INT or mode == NUM_FRAC or mode == NUM_EXP:
            if digit:
                return (mode, stack, 0)
        elif mode == NUM_MINUS:
            if digit:
                return (NUM_ZERO if byte == 0x30 else NUM_INT, stack, 0)
            return None
        elif mode == NUM_DOT:
            return (NUM_FRAC, stack, 0) if digit else None
        elif mode == NUM_E:
            if byte == 0x2B or byte == 0x2D:
                return (NUM_ESIGN, stack, 0)
            return (NUM_EXP, stack, 0) if digit else None
        elif mode == NUM_ESIGN:
            return (NUM_EXP, stack, 0) if digit else None
        if byte == 0x2E and (mode == NUM_ZERO or mode == NUM_INT):
            return (NUM_DOT, stack, 0)
        if (byte == 0x65 or byte == 0x45) and mode != NUM_EXP:
            return (NUM_E, stack, 0)
        return None
