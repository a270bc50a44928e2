"""The tiny Hugging Face Llama vLLM serves (``lab/hf_model.py``): its weights steer greedy
decoding as its docstring says, vLLM's CPU attention can run it, and it is the same on every
write. The tokenizer is trained with ``tokenizers`` (the lab's vLLM venv has it, the default
suite's does not), so the default tests give the weights a vocabulary of the same shape; the
opt-in ``lab`` test writes the whole folder, twice, with the venv."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import numpy as np
import pytest

from lab.hf_model import (
    HEAD_SIZE,
    HIDDEN,
    VOCAB_SIZE,
    byte_symbols,
    corpus,
    transitions,
    weights,
)
from lab.llama_model import SENTENCE
from lab.servers import REPO, SERVERS, ready


def _vocabulary() -> dict[str, int]:
    """A vocabulary shaped as the trained one: specials, the byte alphabet, then words."""
    space = byte_symbols()[ord(" ")]
    tokens = ["<unk>", "<s>", "</s>", "<pad>", *sorted(byte_symbols().values())]
    tokens += [space + word for word in [*SENTENCE, "beginning"]]
    tokens += [f"filler{i}" for i in range(VOCAB_SIZE - len(tokens))]
    return {token: i for i, token in enumerate(tokens)}


def _greedy_next(tensors: dict[str, np.ndarray], token: int) -> int:
    """The next token the bigram part picks (RMSNorm of a one-hot row, then the head)."""
    row = tensors["model.embed_tokens.weight"][token]
    normed = row / np.sqrt(np.mean(row**2) + 1e-5)
    return int(np.argmax(tensors["lm_head.weight"] @ normed))


def test_greedy_decoding_continues_with_the_sentence_and_ends() -> None:
    vocab = _vocabulary()
    tensors = weights(vocab)
    space = byte_symbols()[ord(" ")]
    token, spoken = vocab["A"], []
    while token != vocab["</s>"] and len(spoken) < 20:
        token = _greedy_next(tensors, token)
        spoken.append(token)
    names = {i: t for t, i in vocab.items()}
    assert [names[t] for t in spoken] == [space + w for w in SENTENCE] + [".", "</s>"]
    assert _greedy_next(tensors, vocab[space + "beginning"]) == vocab[space + "seven"]


def test_a_character_split_across_byte_tokens_is_continued_byte_by_byte() -> None:
    vocab = _vocabulary()
    tensors = weights(vocab)
    symbol = byte_symbols()
    token, spoken = vocab[symbol[0x9E]], []  # the last byte of 語
    for _ in range(4):
        token = _greedy_next(tensors, token)
        spoken.append(token)
    assert spoken == [vocab[symbol[b]] for b in (0xE5, 0xAD, 0x97)] + [vocab["."]]
    assert all(line.isascii() for line in corpus()), "a CJK merge would join the bytes of 字"


def test_the_shapes_suit_vllms_cpu_attention_and_the_weights_are_fixed() -> None:
    vocab = _vocabulary()
    first, second = weights(vocab), weights(vocab)
    assert HEAD_SIZE >= 32 and HEAD_SIZE % 16 == 0
    assert first["model.layers.0.self_attn.q_proj.weight"].shape == (HIDDEN, HIDDEN)
    assert first["lm_head.weight"].shape == (VOCAB_SIZE, HIDDEN)
    assert all(np.array_equal(first[name], second[name]) for name in first)
    assert {tensor.dtype for tensor in first.values()} == {np.dtype(np.float32)}


def test_the_steering_needs_every_word_of_the_sentence_as_one_token() -> None:
    vocab = _vocabulary()
    del vocab[byte_symbols()[ord(" ")] + "lazy"]
    with pytest.raises(SystemExit, match="lazy"):
        transitions(vocab)


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.mark.lab
def test_the_written_folder_is_the_same_on_every_write(tmp_path: Path) -> None:
    python = ready(SERVERS["vllm"]).python()
    for name in ("one", "two"):
        subprocess.run([str(python), "-m", "lab.hf_model", str(tmp_path / name)], cwd=REPO,
                       check=True)
    assert _digest(tmp_path / "one") == _digest(tmp_path / "two")
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= set(_digest(tmp_path / "one"))
