"""GPT-2-style pre-tokenization with the standard-library ``re`` module.

Byte-level BPE never merges across pre-token boundaries, which keeps tokens word-like (`` the``,
``ing``, ``   ``) and makes per-pre-token caching effective. GPT-2's pattern needs ``\\p{L}`` and
``\\p{N}``, which only the third-party ``regex`` module has; here the classes are spelled with
stdlib escapes instead:

* letters ``[^\\W\\d_]``: word characters that are neither decimal digits nor ``_`` (this also
  admits the few non-decimal numerics such as ``²`` or ``½``, which GPT-2 would count as numbers);
* digits ``\\d``: Unicode decimal digits;
* other ``(?:[^\\s\\w]|_)``: anything that is neither whitespace, letter nor digit.

Every character falls in exactly one class, and the final ``\\s+`` alternative catches any
whitespace left, so the pieces always concatenate back to the input (the round-trip tests check
this).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

PATTERN = (
    r"'(?:s|t|re|ve|m|ll|d)"  # English contractions, as GPT-2 (case-sensitive)
    r"| ?[^\W\d_]+"  # an optional space and a run of letters
    r"| ?\d+"  # an optional space and a run of digits
    r"| ?(?:[^\s\w]|_)+"  # an optional space and a run of other symbols
    r"|\s+(?!\S)"  # whitespace, leaving the last space to the word that follows
    r"|\s+"  # trailing whitespace
)
_PIECES = re.compile(PATTERN)


def pretokenize(text: str) -> list[str]:
    """Split ordinary text (no special tokens) into pre-tokens that concatenate back to it."""
    return _PIECES.findall(text)


def special_splitter(special_tokens: Mapping[str, int]) -> re.Pattern[str] | None:
    """Build the pattern that cuts text at literal special tokens (longest first), or None."""
    if not special_tokens:
        return None
    alternatives = sorted(special_tokens, key=lambda s: (-len(s), s))
    return re.compile("(" + "|".join(re.escape(s) for s in alternatives) + ")")


def split_specials(text: str, splitter: re.Pattern[str] | None) -> Iterator[tuple[str, bool]]:
    """Yield ``(chunk, is_special)`` in order; empty ordinary chunks are skipped."""
    if splitter is None:
        if text:
            yield text, False
        return
    for index, chunk in enumerate(splitter.split(text)):
        if index % 2:
            yield chunk, True
        elif chunk:
            yield chunk, False
