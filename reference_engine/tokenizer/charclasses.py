"""The pre-tokenizer's character classes as explicit code-point ranges.

``pretokenize.PATTERN`` spells its classes with the standard-library escapes ``\\s``, ``\\d`` and
``\\w``, whose meaning is Python's: ``\\s`` is ``str.isspace`` (which admits U+001C..U+001F,
the information separators), ``\\w`` is ``str.isalnum`` plus ``_`` (which admits ``²`` and
``½``). Other regex engines give the same escapes other sets (Oniguruma, the engine of the
``tokenizers`` library, takes Unicode's White_Space property for ``\\s``), so a pattern that
must match exactly what ``pretokenize`` matches elsewhere names the code points instead. The
sets are read from this Python's ``re`` module itself, never from a table kept by hand, so
they follow its Unicode database (``unicodedata.unidata_version``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

_LAST = 0x10FFFF
_SURROGATES = range(0xD800, 0xE000)


@dataclass(frozen=True)
class CharClasses:
    """The three classes of ``PATTERN``, each as sorted inclusive ``(first, last)`` ranges.

    A character in none of them is a symbol (``(?:[^\\s\\w]|_)``); every character is in at
    most one (``classes`` checks it).
    """

    space: tuple[tuple[int, int], ...]
    letter: tuple[tuple[int, int], ...]
    digit: tuple[tuple[int, int], ...]


@functools.cache
def classes() -> CharClasses:
    """The ranges of ``\\s``, ``[^\\W\\d_]`` and ``\\d`` over every non-surrogate code point."""
    everything = "".join(chr(c) for c in range(_LAST + 1) if c not in _SURROGATES)
    found = CharClasses(
        space=_ranges(everything, r"\s+"),
        letter=_ranges(everything, r"[^\W\d_]+"),
        digit=_ranges(everything, r"\d+"),
    )
    sets = [found.space, found.letter, found.digit]
    for index, first in enumerate(sets):
        for second in sets[index + 1:]:
            if _overlap(first, second):
                raise RuntimeError("the pre-tokenizer's character classes overlap")
    return found


def _ranges(text: str, pattern: str) -> tuple[tuple[int, int], ...]:
    """Maximal runs matching ``pattern`` as code-point ranges. Surrogates are left out of
    ``text``, so a run across them would join two ranges; the split below keeps them apart."""
    out: list[tuple[int, int]] = []
    for match in re.finditer(pattern, text):
        run = match.group()
        first = previous = ord(run[0])
        for char in run[1:]:
            code = ord(char)
            if code != previous + 1:
                out.append((first, previous))
                first = code
            previous = code
        out.append((first, previous))
    return tuple(out)


def _overlap(a: tuple[tuple[int, int], ...], b: tuple[tuple[int, int], ...]) -> bool:
    return any(x0 <= y1 and y0 <= x1 for x0, x1 in a for y0, y1 in b)


def bracket(ranges: tuple[tuple[int, int], ...], *, negate: bool = False) -> str:
    """A character class in the ``\\x{HEX}`` syntax Oniguruma reads: ``[\\x{41}-\\x{5a}]``."""
    body = "".join(
        f"\\x{{{first:x}}}" if first == last else f"\\x{{{first:x}}}-\\x{{{last:x}}}"
        for first, last in ranges
    )
    return f"[{'^' if negate else ''}{body}]"
