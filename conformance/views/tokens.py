"""Logprob tokens as text: the ``bytes:\\xNN`` display form, joining, and character offsets.

Spec: ``LogprobsObject`` in ``spec/completions.yaml``: "A token whose bytes are not valid UTF-8
alone appears as ``bytes:`` and ``\\xNN`` escapes. ``text_offset`` counts characters from the
start of the prompt." So tokens join as bytes, and the text is their UTF-8 decoding.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Sequence

_ESCAPES = re.compile(r"(?:\\x[0-9a-fA-F]{2})+")


def token_bytes(token: str) -> bytes:
    """The bytes a displayed token stands for."""
    if token.startswith("bytes:") and _ESCAPES.fullmatch(token, 6):
        return bytes.fromhex(token[6:].replace("\\x", ""))
    return token.encode("utf-8")


def joined_bytes(tokens: Sequence[str]) -> bytes:
    return b"".join(token_bytes(token) for token in tokens)


def decode_complete(data: bytes) -> tuple[str, bytes]:
    """The text of the complete characters in ``data`` and the bytes of an unfinished one.

    Invalid bytes in the middle decode to U+FFFD, as a streaming decoder would.
    """
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    text = decoder.decode(data, final=False)
    pending, _ = decoder.getstate()
    return text, pending


def joined_text_matches(tokens: Sequence[str], text: str, *, prefix: bool = False) -> bool:
    """Whether ``text`` is what the tokens spell (or a prefix of it, with ``prefix``).

    A trailing partial character may be dropped or shown as one U+FFFD.
    """
    complete, pending = decode_complete(joined_bytes(tokens))
    if prefix:
        return complete.startswith(text) or (complete + "\ufffd").startswith(text)
    if text == complete:
        return True
    return bool(pending) and text == complete + "\ufffd"


def char_offsets(tokens: Sequence[str]) -> list[int | None]:
    """For each token, the number of characters before it, or None when it starts inside a
    multi-byte character (where "characters before it" is not well defined)."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    count = 0
    offsets: list[int | None] = []
    for token in tokens:
        pending, _ = decoder.getstate()
        offsets.append(None if pending else count)
        count += len(decoder.decode(token_bytes(token), final=False))
    return offsets
