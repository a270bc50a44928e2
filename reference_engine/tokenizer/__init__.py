"""Byte-level BPE tokenizer of the reference engine.

``Tokenizer`` encodes and decodes, ``IncrementalDecoder`` turns a token stream into text without
splitting characters, and ``display_to_bytes`` inverts ``Tokenizer.token_display`` (the
``bytes:\\xNN`` convention for tokens that are not valid UTF-8 on their own).
"""

from .display import BYTES_PREFIX, bytes_to_display, display_to_bytes
from .incremental import IncrementalDecoder
from .tokenizer import EOT, Tokenizer

__all__ = [
    "BYTES_PREFIX",
    "EOT",
    "IncrementalDecoder",
    "Tokenizer",
    "bytes_to_display",
    "display_to_bytes",
]
