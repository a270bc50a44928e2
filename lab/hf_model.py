"""Write the lab's tiny Hugging Face Llama folder for vLLM: no download, no hub.

Run from the repository root with an interpreter that has ``transformers``, ``tokenizers``
and ``safetensors`` (the lab's vLLM venv)::

    python -m lab.hf_model OUT_DIR

The folder holds a ``transformers`` ``LlamaConfig`` (hidden 128, 2 layers, 4 heads of 32, 2 KV
heads, feed-forward 256, context 512, float32; vLLM's CPU attention takes head sizes 32, 64,
80, ... only), ``model.safetensors``, and a byte-level BPE tokenizer of 600 tokens trained with
``tokenizers`` on text generated here from ``lab/llama_model.py``'s word lists (``<unk>``,
``<s>``, ``</s>``, ``<pad>``, the 256 byte tokens, then merges; ``<s>`` before every prompt).

The weights are those of ``lab/llama_model.py``'s bigram model, plus fixed-seed noise: the last
token's embedding picks the next token with a logit about 8 above the rest, and small random
attention, feed-forward and output weights (seed 32) tell the other tokens apart, so
``top_logprobs`` has no ties. Greedy decoding therefore:

- continues any prompt with `` The quick brown fox jumps over seven lazy dogs before noon.``
  and ends with ``</s>`` (``finish_reason`` "stop" at 12 tokens, "length" below that);
- continues a prompt ending in `` beginning`` from `` seven`` (so two prompts differ);
- continues a prompt ending in ``語`` with ``字.``, ``字`` spelled by three byte tokens (the
  corpus is ASCII, so no merge joins them): a character split across tokens.

Everything is a function of this file: the same folder, byte for byte, on every run.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import numpy as np

from lab.llama_model import FILLER_WORDS, LOGIT_GAP, SENTENCE, SIDE_WORDS

VOCAB_SIZE = 600
HIDDEN, LAYERS, HEADS, KV_HEADS, FEED_FORWARD, CONTEXT = 128, 2, 4, 2, 256, 512
HEAD_SIZE = HIDDEN // HEADS
SEED = 32
NOISE = 0.01
"""The standard deviation of the random weights: small beside the bigram's signal."""
SPECIAL = ["<unk>", "<s>", "</s>", "<pad>"]
NAME = "lab-tiny-hf-llama"


def byte_symbols() -> dict[int, str]:
    """GPT-2's byte-level alphabet: each byte as the printable character that stands for it."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAC + 1), *range(0xAE, 0x100)]
    symbols, extra = {}, 0
    for byte in range(256):
        if byte in printable:
            symbols[byte] = chr(byte)
        else:
            symbols[byte] = chr(256 + extra)
            extra += 1
    return symbols


def corpus() -> list[str]:
    """The tokenizer's training text: the sentence most often (so each of its words becomes
    one token), then the side words, then each filler word a few times; ASCII only."""
    sentence = " " + " ".join(SENTENCE) + "."
    lines = [sentence] * 64
    lines += [f" {word} {word} {word} {word}" for word in SIDE_WORDS for _ in range(16)]
    lines += [" " + " ".join(FILLER_WORDS[i:i + 12]) for i in range(0, len(FILLER_WORDS), 12)] * 3
    return lines


def tokenizer_json() -> str:
    """The trained tokenizer (``tokenizers``' JSON), with ``<s>`` added before every prompt."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE, special_tokens=SPECIAL, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), min_frequency=1,
    )
    tokenizer.train_from_iterator(corpus(), trainer=trainer)
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", 1)])
    return str(tokenizer.to_str())


def transitions(vocab: dict[str, int]) -> tuple[dict[int, int], int]:
    """``{token id: next token id}`` for the tokens that steer, and the default next token."""
    space = byte_symbols()[ord(" ")]
    missing = [w for w in [*SENTENCE, "beginning"] if space + w not in vocab]
    if missing or len(vocab) != VOCAB_SIZE:
        raise SystemExit(f"the tokenizer has {len(vocab)} tokens, lacking {missing}")
    words = [vocab[space + w] for w in SENTENCE] + [vocab["."]]
    following = dict(itertools.pairwise([*words, vocab["</s>"]]))
    following[vocab[space + "beginning"]] = vocab[space + "seven"]
    # 語 ends in the byte 0x9E; 字 is E5 AD 97
    symbol = byte_symbols()
    chain = [vocab[symbol[b]] for b in (0x9E, 0xE5, 0xAD, 0x97)] + [vocab["."]]
    following.update(itertools.pairwise(chain))
    return following, words[0]


def weights(vocab: dict[str, int]) -> dict[str, np.ndarray]:
    """The tensors, named as ``transformers``' ``LlamaForCausalLM`` names them."""
    following, default = transitions(vocab)
    targets = sorted(set(following.values()) | {default})
    if len(targets) > HIDDEN:
        raise SystemExit("more distinct next tokens than hidden dimensions")
    dim_of_target = {target: d for d, target in enumerate(targets)}
    rng = np.random.default_rng(SEED)

    def noise(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * NOISE).astype(np.float32)

    embed = np.zeros((VOCAB_SIZE, HIDDEN), dtype=np.float32)
    for token in range(VOCAB_SIZE):
        embed[token, dim_of_target[following.get(token, default)]] = 1.0
    # RMSNorm turns a one-hot row into sqrt(HIDDEN) times itself
    head = noise(VOCAB_SIZE, HIDDEN)
    for target, d in dim_of_target.items():
        head[target, d] = LOGIT_GAP / np.sqrt(HIDDEN)
    tensors = {"model.embed_tokens.weight": embed, "model.norm.weight": _ones(),
               "lm_head.weight": head}
    for layer in range(LAYERS):
        prefix = f"model.layers.{layer}."
        tensors |= {
            prefix + "input_layernorm.weight": _ones(),
            prefix + "self_attn.q_proj.weight": noise(HEADS * HEAD_SIZE, HIDDEN),
            prefix + "self_attn.k_proj.weight": noise(KV_HEADS * HEAD_SIZE, HIDDEN),
            prefix + "self_attn.v_proj.weight": noise(KV_HEADS * HEAD_SIZE, HIDDEN),
            prefix + "self_attn.o_proj.weight": noise(HIDDEN, HEADS * HEAD_SIZE),
            prefix + "post_attention_layernorm.weight": _ones(),
            prefix + "mlp.gate_proj.weight": noise(FEED_FORWARD, HIDDEN),
            prefix + "mlp.up_proj.weight": noise(FEED_FORWARD, HIDDEN),
            prefix + "mlp.down_proj.weight": noise(HIDDEN, FEED_FORWARD),
        }
    return tensors


def _ones() -> np.ndarray:
    return np.ones(HIDDEN, dtype=np.float32)


def config() -> dict[str, object]:
    """``LlamaConfig``'s arguments."""
    return {
        "vocab_size": VOCAB_SIZE, "hidden_size": HIDDEN, "intermediate_size": FEED_FORWARD,
        "num_hidden_layers": LAYERS, "num_attention_heads": HEADS,
        "num_key_value_heads": KV_HEADS, "head_dim": HEAD_SIZE, "hidden_act": "silu",
        "max_position_embeddings": CONTEXT, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
        "tie_word_embeddings": False, "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 3,
        "torch_dtype": "float32",
    }


def write(folder: Path) -> None:
    """Write the model folder (config, weights, tokenizer) into ``folder``."""
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer
    from transformers import LlamaConfig, PreTrainedTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = Tokenizer.from_str(tokenizer_json())
    vocab = tokenizer.get_vocab()
    LlamaConfig(**config()).save_pretrained(folder)
    save_file(weights(vocab), str(folder / "model.safetensors"), metadata={"format": "pt"})
    PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
        pad_token="<pad>", model_max_length=CONTEXT,
    ).save_pretrained(folder)
    (folder / "lab-model.json").write_text(
        json.dumps({"name": NAME, "written_by": "lab/hf_model.py", "seed": SEED}) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m lab.hf_model OUT_DIR")
    write(Path(sys.argv[1]))
