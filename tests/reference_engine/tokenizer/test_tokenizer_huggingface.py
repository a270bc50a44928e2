"""The Hugging Face export gives exactly the engine's ids, decodes back, and is deterministic.

The exported ``tokenizer.json`` is loaded with the ``tokenizers`` library (a test dependency
only) and compared with ``Tokenizer.encode`` on any Unicode text, on text rich in the characters
where regex engines disagree (Python's ``\\s`` takes U+001C..U+001F, Oniguruma's does not; ``²``
is a letter to Python's ``[^\\W\\d_]``), on prompts holding ``<|endoftext|>``, and on the whole
training corpus. The default run draws a few hundred examples per property; the ``slow`` run
draws thousands.
"""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as HFTokenizer

from reference_engine.artifacts import load
from reference_engine.engine import CONTEXT_LENGTH
from reference_engine.tokenizer import EOT
from reference_engine.tokenizer.__main__ import main as export_main
from reference_engine.tokenizer.huggingface import FILES, byte_alphabet, files
from reference_engine.training.corpus import CORPUS_DIR, CORPUS_FILES, load_documents

TOKENIZER = load().tokenizer
EXPORTED = files(TOKENIZER, context_length=CONTEXT_LENGTH)
HF = HFTokenizer.from_str(EXPORTED["tokenizer.json"].decode("utf-8"))
CORPUS = "".join((CORPUS_DIR / name).read_text(encoding="utf-8") for name in CORPUS_FILES)

FEW = settings(max_examples=300, deadline=None, database=None)
MANY = settings(max_examples=5000, deadline=None, database=None)

# Characters on which regex engines (and GPT-2's pattern) classify differently, beside plain ASCII.
TRICKY = (
    " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2028\u2029\u202f\u3000"
    "_'’²³½¼Ⅻ٣०߁𝟘𝟙0123456789aAzZéßİıǅ日本語한ΩЖ\u0301\u200d👍🇯🇵€$<|>-."  # noqa: RUF001
)
tricky_texts = st.text(alphabet=st.sampled_from(TRICKY) | st.characters(codec="utf-8"),
                       max_size=60)
contraction_texts = st.lists(
    st.sampled_from(["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'x", "it", " ", "  ",
                     "\n", "'", "don", " 42", "_", "²"]), max_size=12).map("".join)
eot_texts = st.lists(tricky_texts, max_size=4).map(EOT.join)


@st.composite
def corpus_slices(draw: st.DrawFn) -> str:
    """A slice of the raw corpus (separators included), up to 400 characters."""
    start = draw(st.integers(0, len(CORPUS) - 1))
    return CORPUS[start:start + draw(st.integers(0, 400))]


texts = st.one_of(st.text(), tricky_texts, contraction_texts, eot_texts, corpus_slices())


def same_ids_and_round_trip(text: str) -> None:
    ids = HF.encode(text).ids
    assert ids == TOKENIZER.encode(text), repr(text)
    assert HF.decode(ids, skip_special_tokens=False) == text


@FEW
@given(texts)
def test_exported_tokenizer_gives_the_engines_ids(text: str) -> None:
    same_ids_and_round_trip(text)


@pytest.mark.slow
@MANY
@given(texts)
def test_exported_tokenizer_gives_the_engines_ids_at_length(text: str) -> None:
    same_ids_and_round_trip(text)


def test_every_training_document_tokenizes_the_same() -> None:
    for document in load_documents():
        same_ids_and_round_trip(document)
    same_ids_and_round_trip(CORPUS)


@pytest.mark.parametrize("text", ["", EOT, EOT + EOT, f"a{EOT}b", f" {EOT} ", "<|endoftext|",
                                  "x\x1c\x1dy", "\x85 ", "a  \n\n  b  ", "x²y", "don't I'll"])
def test_edge_cases(text: str) -> None:
    same_ids_and_round_trip(text)


def test_vocabulary_and_special_token() -> None:
    assert HF.get_vocab_size() == TOKENIZER.vocab_size
    assert HF.token_to_id(EOT) == TOKENIZER.eot_id
    alphabet = byte_alphabet()
    assert sorted(alphabet) == list(range(256)) and len(set(alphabet.values())) == 256
    for token_id in (0, 32, 255, 256, TOKENIZER.vocab_size - 2):
        spelled = "".join(alphabet[b] for b in TOKENIZER.token_bytes(token_id))
        assert HF.token_to_id(spelled) == token_id


def test_config_names_the_special_token() -> None:
    config = json.loads(EXPORTED["tokenizer_config.json"])
    assert config["eos_token"] == EOT
    assert config["clean_up_tokenization_spaces"] is False
    assert config["model_max_length"] == CONTEXT_LENGTH
    assert json.loads(EXPORTED["special_tokens_map.json"])["eos_token"] == EOT


def test_export_command_writes_the_same_bytes_twice(tmp_path, capsys) -> None:
    digests = []
    for name in ("one", "two"):
        assert export_main(["export", str(tmp_path / name)]) == 0
        digests.append({f: hashlib.sha256((tmp_path / name / f).read_bytes()).hexdigest()
                        for f in FILES})
    assert digests[0] == digests[1]
    assert (tmp_path / "one" / "tokenizer.json").read_bytes() == EXPORTED["tokenizer.json"]
    assert "tokenizer.json" in capsys.readouterr().out
