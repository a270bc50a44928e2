"""Tokenizer: exact byte round trips, special tokens, display strings, streaming decode."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_engine.artifacts import load
from reference_engine.tokenizer import EOT, IncrementalDecoder, Tokenizer, display_to_bytes
from reference_engine.tokenizer.bpe import LONG_PIECE, merge_heap, merge_simple
from reference_engine.tokenizer.pretokenize import pretokenize

TOKENIZER = load().tokenizer
RANKS = {pair: 256 + index for index, pair in enumerate(TOKENIZER.merges)}
MULTILINGUAL = (
    "Café crème brûlée, Zürich, São Paulo, Łódź. 日本語の文章。中文汉字，今天天气很好。"  # noqa: RUF001
    "한국어 안녕하세요 👍🎉❤️🚀🐍 👨‍👩‍👧 🇯🇵 α β λ € ≤ → …"  # noqa: RUF001
)

texts_with_eot = st.lists(st.text(max_size=40), max_size=4).map(EOT.join)


def test_vocabulary_shape() -> None:
    assert TOKENIZER.vocab_size == 4096
    assert TOKENIZER.eot_id == TOKENIZER.vocab_size - 1
    assert dict(TOKENIZER.special_tokens) == {EOT: TOKENIZER.eot_id}
    assert TOKENIZER.token_bytes(TOKENIZER.eot_id) == EOT.encode()
    assert TOKENIZER.token_display(TOKENIZER.eot_id) == EOT


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_round_trip_any_text(text: str) -> None:
    ids = TOKENIZER.encode(text)
    assert TOKENIZER.decode_bytes(ids) == text.encode("utf-8")
    assert TOKENIZER.decode(ids) == text


@settings(max_examples=200, deadline=None)
@given(texts_with_eot)
def test_round_trip_with_endoftext(text: str) -> None:
    ids = TOKENIZER.encode(text)
    assert TOKENIZER.decode_bytes(ids) == text.encode("utf-8")
    assert ids.count(TOKENIZER.eot_id) == text.count(EOT)


def test_endoftext_literal_is_one_token() -> None:
    ids = TOKENIZER.encode(f"end.{EOT}Start")
    assert TOKENIZER.eot_id in ids
    assert ids == [*TOKENIZER.encode("end."), TOKENIZER.eot_id, *TOKENIZER.encode("Start")]


def test_common_words_are_single_tokens() -> None:
    assert len(TOKENIZER.encode(" the")) == 1
    assert len(TOKENIZER.encode("The Python")) <= 3


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_pretokens_concatenate_back(text: str) -> None:
    assert "".join(pretokenize(text)) == text


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=3 * LONG_PIECE) | st.text(max_size=200).map(str.encode))
def test_heap_and_simple_merges_agree(data: bytes) -> None:
    assert merge_heap(list(data), RANKS) == merge_simple(list(data), RANKS)


@pytest.mark.parametrize(
    "text",
    [" " * 5000, "a" * 3000, "x_y" * 700, "\n\n" * 900 + "end", "é" * 1000, "🐍" * 300],
)
def test_long_pieces(text: str) -> None:
    assert TOKENIZER.decode_bytes(TOKENIZER.encode(text)) == text.encode("utf-8")


def test_lone_surrogate_is_rejected() -> None:
    with pytest.raises(UnicodeEncodeError):
        TOKENIZER.encode("a\ud800b")


def test_valid_ids() -> None:
    size = TOKENIZER.vocab_size
    assert TOKENIZER.is_valid_id(0) and TOKENIZER.is_valid_id(size - 1)
    assert TOKENIZER.is_valid_id(np.int64(7)) and TOKENIZER.is_valid_id(np.uint16(7))
    for bad in (-1, size, True, 1.0, "3", None):
        assert not TOKENIZER.is_valid_id(bad)
    with pytest.raises(ValueError):
        TOKENIZER.token_bytes(size)
    with pytest.raises(ValueError):
        TOKENIZER.decode_bytes([1, -1])


def test_display_round_trip_every_token() -> None:
    escaped = re.compile(r"bytes:(?:\\x[0-9a-f]{2})+")
    partial = 0
    for token_id in range(TOKENIZER.vocab_size):
        raw = TOKENIZER.token_bytes(token_id)
        display = TOKENIZER.token_display(token_id)
        assert display_to_bytes(display) == raw
        try:
            assert display == raw.decode("utf-8")
        except UnicodeDecodeError:
            partial += 1
            assert escaped.fullmatch(display)
    assert partial > 0


def test_display_of_partial_character() -> None:
    (token_id,) = [
        i for i in range(256, TOKENIZER.vocab_size) if TOKENIZER.token_bytes(i) == b"\xe2\x80"
    ]
    assert TOKENIZER.token_display(token_id) == "bytes:\\xe2\\x80"
    assert TOKENIZER.token_display(0xFF) == "bytes:\\xff"
    assert display_to_bytes("bytes:\\xe2\\x80") == b"\xe2\x80"
    assert display_to_bytes("bytes: not escapes") == b"bytes: not escapes"


def _stream(text: str) -> list[str]:
    decoder = IncrementalDecoder(TOKENIZER)
    pieces = [decoder.push(token_id) for token_id in TOKENIZER.encode(text)]
    pieces.append(decoder.flush())
    return pieces


def test_incremental_decoder_never_splits_characters() -> None:
    ids = TOKENIZER.encode(MULTILINGUAL)
    assert any(TOKENIZER.token_display(i).startswith("bytes:") for i in ids)
    pieces = _stream(MULTILINGUAL)
    assert all("\ufffd" not in piece for piece in pieces)
    assert "".join(pieces) == MULTILINGUAL


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0x80, exclude_categories=("Cs",)), max_size=30))
def test_incremental_decoder_any_non_ascii(text: str) -> None:
    pieces = _stream(text)
    assert "".join(pieces) == text
    if "\ufffd" not in text:
        assert all("\ufffd" not in piece for piece in pieces)


def test_incremental_decoder_invalid_bytes() -> None:
    decoder = IncrementalDecoder(TOKENIZER)
    assert decoder.push(0xE2) == ""
    assert decoder.pending == b"\xe2"
    assert decoder.push(0x28) == "\ufffd("  # certainly invalid once a non-continuation arrives
    assert decoder.push(0xFF) == "\ufffd"
    assert decoder.push(0xF0) == ""
    assert decoder.flush() == "\ufffd"  # incomplete at the end of the stream
    assert decoder.push(ord("a")) == "a"


def test_json_round_trip() -> None:
    clone = Tokenizer.from_json(TOKENIZER.to_json())
    assert clone.merges == TOKENIZER.merges
    assert clone.encode(MULTILINGUAL) == TOKENIZER.encode(MULTILINGUAL)
    with pytest.raises(ValueError):
        Tokenizer([(0, 5000)], [EOT])
