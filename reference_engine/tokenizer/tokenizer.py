"""The byte-level BPE tokenizer used by the reference engine.

Ids ``0..255`` are the single bytes, ``256..`` the learned merges in the order they were learned,
and the special tokens come last (``<|endoftext|>`` is ``eot_id``). Any Unicode string that can be
encoded as UTF-8 is representable, so encoding never fails on real text and decoding gives back
the exact bytes.

Special tokens: the literal text ``<|endoftext|>`` anywhere in the input encodes to ``eot_id``,
as in GPT-2-style completion servers (a prompt may spell document boundaries that way); there is
no escape for it. Everything else is pre-tokenized (``pretokenize``) and BPE-merged (``bpe``),
with a bounded LRU cache per pre-token because the mock encodes every prompt and natural text
repeats the same words constantly.

Display: ``token_display`` gives a token's text when its bytes are valid UTF-8 on their own, and
``bytes:\\xNN...`` (lower-case hex, one escape per byte) when they are part of a multi-byte
character, as OpenAI's API does; ``display.display_to_bytes`` inverts it (see ``display``).
"""

from __future__ import annotations

import functools
import json
import operator
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from . import bpe
from .display import bytes_to_display
from .pretokenize import PATTERN, pretokenize, special_splitter, split_specials

FORMAT = "refbpe-1"
EOT = "<|endoftext|>"
# Cache bound: entries are short pieces, so this is a few MB at most, and covers the working
# vocabulary of any realistic prompt mix.
CACHE_SIZE = 32768
# Pieces longer than this are not cached: they are rare, and would make the cache's memory grow
# with prompt size instead of with the entry count.
CACHE_MAX_PIECE = 128


class Tokenizer:
    """Byte-level BPE tokenizer with special tokens; immutable and safe to share across threads."""

    vocab_size: int
    eot_id: int
    special_tokens: Mapping[str, int]

    def __init__(self, merges: Sequence[tuple[int, int]], special_tokens: Sequence[str]) -> None:
        """Build from merges (pair of ids -> next id, in order) and special-token texts.

        Raises ValueError if a merge refers to a token that does not exist yet, or if the
        special tokens lack ``<|endoftext|>`` or repeat.
        """
        token_bytes: list[bytes] = [bytes([i]) for i in range(256)]
        ranks: dict[tuple[int, int], int] = {}
        for first, second in merges:
            first, second = int(first), int(second)
            if not (0 <= first < len(token_bytes) and 0 <= second < len(token_bytes)):
                raise ValueError(f"merge ({first}, {second}) uses an undefined token")
            if (first, second) in ranks:
                raise ValueError(f"merge ({first}, {second}) appears twice")
            ranks[(first, second)] = len(token_bytes)
            token_bytes.append(token_bytes[first] + token_bytes[second])
        if EOT not in special_tokens or len(set(special_tokens)) != len(special_tokens):
            raise ValueError(f"special tokens must be distinct and include {EOT!r}")
        specials: dict[str, int] = {}
        for text in special_tokens:
            specials[text] = len(token_bytes)
            token_bytes.append(text.encode("utf-8"))
        self._merges: tuple[tuple[int, int], ...] = tuple((int(a), int(b)) for a, b in merges)
        self._ranks = ranks
        self._token_bytes: tuple[bytes, ...] = tuple(token_bytes)
        self._display: tuple[str, ...] = tuple(bytes_to_display(b) for b in token_bytes)
        self.vocab_size = len(token_bytes)
        self.special_tokens = MappingProxyType(specials)
        self.eot_id = specials[EOT]
        self._splitter = special_splitter(specials)
        # A per-instance cache (not a module global), so two tokenizers never share entries.
        self._cached_piece = functools.lru_cache(maxsize=CACHE_SIZE)(self._encode_piece)

    # -- encoding ---------------------------------------------------------------------------

    def _encode_piece(self, piece: str) -> tuple[int, ...]:
        return bpe.merge(piece.encode("utf-8"), self._ranks)

    def encode(self, text: str) -> list[int]:
        """Encode text to token ids; literal ``<|endoftext|>`` becomes ``eot_id``.

        Raises UnicodeEncodeError (a ValueError) if the text holds a lone surrogate, which has no
        UTF-8 form; an HTTP layer should report that as a client error.
        """
        ids: list[int] = []
        cached = self._cached_piece
        for chunk, is_special in split_specials(text, self._splitter):
            if is_special:
                ids.append(self.special_tokens[chunk])
                continue
            for piece in pretokenize(chunk):
                if len(piece) <= CACHE_MAX_PIECE:
                    ids.extend(cached(piece))
                else:
                    ids.extend(self._encode_piece(piece))
        return ids

    # -- decoding ---------------------------------------------------------------------------

    def is_valid_id(self, token_id: object) -> bool:
        """True for an integer (Python or NumPy, not bool or float) in ``0 .. vocab_size - 1``."""
        if isinstance(token_id, bool):
            return False
        try:
            index = operator.index(token_id)  # type: ignore[arg-type]
        except TypeError:
            return False
        return 0 <= index < self.vocab_size

    def _check(self, token_id: int) -> int:
        if not self.is_valid_id(token_id):
            raise ValueError(f"invalid token id {token_id!r} (vocab_size {self.vocab_size})")
        return operator.index(token_id)  # type: ignore[arg-type]

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of one token; a special token gives its literal UTF-8 text."""
        return self._token_bytes[self._check(token_id)]

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """Concatenate the bytes of the tokens; exact inverse of ``encode`` on UTF-8 bytes."""
        table = self._token_bytes
        return b"".join([table[self._check(token_id)] for token_id in ids])

    def decode(self, ids: Iterable[int]) -> str:
        """Decode to text, replacing invalid UTF-8 with U+FFFD.

        Use ``IncrementalDecoder`` when output is produced token by token: it holds back
        incomplete characters instead of replacing them.
        """
        return self.decode_bytes(ids).decode("utf-8", errors="replace")

    def token_display(self, token_id: int) -> str:
        """The token as shown in ``logprobs.tokens`` / ``top_logprobs`` (see ``display``)."""
        return self._display[self._check(token_id)]

    # -- persistence ------------------------------------------------------------------------

    @property
    def merges(self) -> tuple[tuple[int, int], ...]:
        """The learned merges in order; merge ``i`` creates token ``256 + i``."""
        return self._merges

    def to_json(self) -> str:
        """Serialize deterministically (fixed key order, one merge per line for readable diffs)."""
        special_list = sorted(self.special_tokens.items(), key=lambda item: item[1])
        merge_lines = ",\n    ".join(f"[{a}, {b}]" for a, b in self._merges)
        return (
            "{\n"
            f'  "format": {json.dumps(FORMAT)},\n'
            f'  "pattern": {json.dumps(PATTERN)},\n'
            f'  "vocab_size": {self.vocab_size},\n'
            f'  "special_tokens": {json.dumps([text for text, _ in special_list])},\n'
            f'  "merges": [\n    {merge_lines}\n  ]\n'
            "}\n"
        )

    @classmethod
    def from_json(cls, text: str) -> Tokenizer:
        """Load what ``to_json`` wrote; raises ValueError if it is for another format/pattern."""
        data: dict[str, Any] = json.loads(text)
        if data.get("format") != FORMAT:
            raise ValueError(f"unsupported tokenizer format {data.get('format')!r}")
        if data.get("pattern") != PATTERN:
            raise ValueError("tokenizer was trained with a different pre-tokenization pattern")
        tokenizer = cls([(a, b) for a, b in data["merges"]], data["special_tokens"])
        if tokenizer.vocab_size != data.get("vocab_size"):
            raise ValueError("tokenizer vocab_size does not match its merges")
        return tokenizer

    @classmethod
    def from_file(cls, path: Path) -> Tokenizer:
        """Load a tokenizer JSON file."""
        return cls.from_json(Path(path).read_text(encoding="utf-8"))
