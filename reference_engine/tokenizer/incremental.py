"""Token-by-token decoding that never emits half a character.

A byte-level BPE token may end in the middle of a multi-byte UTF-8 character (an emoji is four
bytes and often spans two or three tokens). Streaming each token's bytes through
``bytes.decode(errors="replace")`` would print U+FFFD for every split character. The
:class:`IncrementalDecoder` keeps incomplete trailing bytes back until the character is complete.
Bytes are replaced with U+FFFD only once they are certainly invalid: a byte that cannot start or
continue a character as soon as it is seen, and an incomplete sequence at :meth:`flush`.

CPython's incremental UTF-8 decoder already has exactly these semantics (it replaces the maximal
invalid subpart as soon as it is known invalid, per the Unicode recommendation), so this wraps it.
"""

from __future__ import annotations

import codecs
from typing import Protocol


class _TokenBytes(Protocol):
    def token_bytes(self, token_id: int) -> bytes: ...


class IncrementalDecoder:
    """Turn a stream of token ids into a stream of complete text; one per generation stream."""

    def __init__(self, tokenizer: _TokenBytes) -> None:
        """Start an empty stream decoding tokens of ``tokenizer``."""
        self._tokenizer = tokenizer
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def push(self, token_id: int) -> str:
        """Add one token; return the text that became complete (possibly empty).

        A special token decodes to its literal text (``<|endoftext|>``); a generation loop that
        stops at end of text should not push it.
        """
        return self._decoder.decode(self._tokenizer.token_bytes(token_id), final=False)

    def push_bytes(self, data: bytes) -> str:
        """``push`` for a token whose bytes the caller already holds (a generation loop looks
        them up in its table instead of validating the id a second time)."""
        return self._decoder.decode(data, False)

    @property
    def pending(self) -> bytes:
        """The bytes held back because they do not yet form a complete character."""
        buffered, _ = self._decoder.getstate()
        return bytes(buffered)

    def flush(self) -> str:
        """End of stream: return what is left, with an incomplete character as U+FFFD."""
        text = self._decoder.decode(b"", final=True)
        self._decoder.reset()
        return text
