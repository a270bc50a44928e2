"""The engine's tokenizer as a Hugging Face tokenizer directory, built from the artifact.

Clients that count tokens before they send (lm-eval's loglikelihood tasks, which need the
context's length; gateways enforcing budgets; chunkers) load a tokenizer with the ``tokenizers``
library or ``transformers.AutoTokenizer``, not the engine's own ``refbpe-1`` format. ``files``
writes the same tokenizer in theirs, so that it gives exactly the engine's ids:

* ``tokenizer.json``: a byte-level BPE model whose vocabulary maps each token's bytes (in the
  GPT-2 byte-to-character alphabet) to the engine's id, the merges in the engine's order (merge
  ``i`` makes token ``256 + i``, so its rank is its id's order), ``ignore_merges`` off;
  a ``Split`` pre-tokenizer with ``PATTERN``'s alternatives and its classes as explicit ranges
  (``charclasses``), then ``ByteLevel`` without its own regex or prefix space; no normalizer
  and no post-processor (the engine adds no token to a prompt); ``<|endoftext|>`` an added
  special token, matched before pre-tokenization, as ``split_specials`` does.
* ``tokenizer_config.json`` and ``special_tokens_map.json``: what ``AutoTokenizer`` reads; the
  special token is the eos (and bos and unk, as GPT-2's), and decoding does not clean up spaces.

Nothing here imports ``tokenizers``: the JSON is written by hand from the merges, so the export
needs no extra dependency; the property tests load it with ``tokenizers`` and compare ids.
The bytes are the same on every run (sorted, fixed layout), given the same artifact and
Unicode database.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from .charclasses import bracket, classes
from .tokenizer import EOT, Tokenizer

FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


def byte_alphabet() -> dict[int, str]:
    """GPT-2's printable stand-in character for each byte (``bytes_to_unicode``): the bytes that
    are printable Latin-1 stand for themselves, the others take code points from U+0100 on."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
                 *range(ord("®"), ord("ÿ") + 1)]
    table = {byte: chr(byte) for byte in printable}
    extra = 0
    for byte in range(256):
        if byte not in table:
            table[byte] = chr(256 + extra)
            extra += 1
    return table


def split_pattern() -> str:
    """``pretokenize.PATTERN`` with ``\\s``, ``\\d`` and ``[^\\W\\d_]`` spelled as ranges."""
    found = classes()
    space = bracket(found.space)
    not_space = bracket(found.space, negate=True)
    letters = bracket(found.letter)
    digits = bracket(found.digit)
    symbols = bracket(tuple(sorted(found.space + found.letter + found.digit)), negate=True)
    return (
        "'(?:s|t|re|ve|m|ll|d)"
        f"| ?{letters}+"
        f"| ?{digits}+"
        f"| ?{symbols}+"
        f"|{space}+(?!{not_space})"
        f"|{space}+"
    )


def tokenizer_json(tokenizer: Tokenizer) -> dict[str, object]:
    """The ``tokenizers`` library's serialization of ``tokenizer``.

    Raises ValueError if two ids have the same bytes: a ``tokenizers`` vocabulary maps each
    string to one id, so such a tokenizer has no exact export.
    """
    alphabet = byte_alphabet()

    def spelled(token_id: int) -> str:
        return "".join(alphabet[b] for b in tokenizer.token_bytes(token_id))

    vocab: dict[str, int] = {}
    for token_id in range(tokenizer.vocab_size):
        special = token_id in tokenizer.special_tokens.values()
        text = tokenizer.token_display(token_id) if special else spelled(token_id)
        if text in vocab:
            raise ValueError(f"tokens {vocab[text]} and {token_id} have the same bytes")
        vocab[text] = token_id
    merges = [f"{spelled(first)} {spelled(second)}" for first, second in tokenizer.merges]
    added = [
        {"id": token_id, "content": text, "single_word": False, "lstrip": False,
         "rstrip": False, "normalized": False, "special": True}
        for text, token_id in sorted(tokenizer.special_tokens.items(), key=lambda kv: kv[1])
    ]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": split_pattern()},
             "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
             "use_regex": False},
        ]},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                    "use_regex": False},
        "model": {
            "type": "BPE", "dropout": None, "unk_token": None,
            "continuing_subword_prefix": None, "end_of_word_suffix": None,
            "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
            "vocab": vocab, "merges": merges,
        },
    }


def tokenizer_config(tokenizer: Tokenizer, *, context_length: int) -> dict[str, object]:
    """``tokenizer_config.json``: the class ``AutoTokenizer`` builds and its special tokens."""
    decoder = {
        str(token_id): {"content": text, "single_word": False, "lstrip": False,
                        "rstrip": False, "normalized": False, "special": True}
        for text, token_id in sorted(tokenizer.special_tokens.items(), key=lambda kv: kv[1])
    }
    return {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "added_tokens_decoder": decoder,
        "bos_token": EOT,
        "eos_token": EOT,
        "unk_token": EOT,
        "add_bos_token": False,
        "add_eos_token": False,
        "clean_up_tokenization_spaces": False,
        "model_max_length": context_length,
    }


def special_tokens_map() -> dict[str, str]:
    """``special_tokens_map.json``: GPT-2's convention, the one special token in every role."""
    return {"bos_token": EOT, "eos_token": EOT, "unk_token": EOT}


def files(tokenizer: Tokenizer, *, context_length: int) -> dict[str, bytes]:
    """The directory's files by name, as bytes (UTF-8 JSON, two-space indent, final newline)."""
    contents: Mapping[str, object] = {
        "tokenizer.json": tokenizer_json(tokenizer),
        "tokenizer_config.json": tokenizer_config(tokenizer, context_length=context_length),
        "special_tokens_map.json": special_tokens_map(),
    }
    return {
        name: (json.dumps(value, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
        for name, value in contents.items()
    }


def export(tokenizer: Tokenizer, directory: Path, *, context_length: int) -> list[Path]:
    """Write the files into ``directory`` (created if missing); returns their paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in files(tokenizer, context_length=context_length).items():
        path = directory / name
        path.write_bytes(data)
        written.append(path)
    return written
