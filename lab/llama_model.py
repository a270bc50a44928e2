"""Write the lab's tiny GGUF model for the llama.cpp servers: no download, weights set by hand.

Run with an interpreter that has the ``gguf`` package and numpy (the lab's llama venv)::

    python lab/llama_model.py OUT.gguf

The model is a real llama-architecture network (2 blocks, n_embd 64, 4 heads, feed-forward 128,
context 512, f32) with an SPM vocabulary of 600 tokens: ``<unk>``, ``<s>``, ``</s>``, the 256
byte-fallback tokens ``<0xNN>``, ``▁``, the printable ASCII characters, and words with the
``▁`` prefix (with their prefixes, so SPM's merges reach them). Its weights make it a bigram
model: attention and feed-forward outputs are zero, so the last token's embedding alone picks
the next token, with a logit 8 above every other (about 88% of the mass at temperature 1, the
rest spread over the vocabulary, so sampling still varies). Greedy decoding therefore:

- continues any prompt with `` The quick brown fox jumps over seven lazy dogs before noon.``
  and ends with end-of-text (``finish_reason`` "stop" at 12 tokens, "length" below that);
- continues a prompt ending in ``beginning`` from `` seven`` (so two prompts differ);
- continues a prompt ending in ``語`` with ``字.``, ``字`` spelled by three byte-fallback tokens
  (a character split across tokens, as streams must handle).
"""

from __future__ import annotations

import itertools
import sys

import numpy as np

SPACE = "\u2581"
SENTENCE = ["The", "quick", "brown", "fox", "jumps", "over", "seven", "lazy", "dogs", "before",
            "noon"]
SIDE_WORDS = ["is", "beginning", "list", "In", "A", "the", "text", "Japanese"]
FILLER_WORDS = (
    "and of to in that it was for on are as with his they at be this from have or by one had "
    "not but what all were when we there can an your which their said if do will each about "
    "how up out them then she many some so these would other into has more her two like him "
    "see time could no make than first been its who now people my made over did down only way "
    "find use may water long little very after words called just where most know get through "
    "back much go good new write our me man too any day same right look think also around "
    "another came come work three word must because does part even place well such here take "
    "why things help put years different away again off went old number great tell men say "
    "small every found still between name should home big give air line set own under read "
    "last never us left end along while might next sound below saw something thought both few "
    "those always looked show large often together asked house world going want school "
    "important until form food keep children feet land side without boy once animals life "
    "enough took sometimes four head above kind began almost live page got earth need far "
    "hand high year mother light parts country father let night following picture being study "
    "second eyes soon times story boys since white days ever paper hard near sentence better "
    "best across during today others however sure means knew"
).split()
VOCAB_SIZE = 600
N_EMBD, N_HEAD, N_FF, N_BLOCKS, N_CTX = 64, 4, 128, 2, 512
LOGIT_GAP = 8.0
"""How far the intended next token's logit stands above the others'."""


def vocabulary() -> tuple[list[str], list[float], list[int]]:
    """Tokens, SPM scores (longer pieces merge first) and token types."""
    from gguf import TokenType  # here, so the word lists import without gguf (lab/hf_model.py)

    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [TokenType.UNKNOWN, TokenType.CONTROL, TokenType.CONTROL] + [TokenType.BYTE] * 256
    scores = [0.0] * len(tokens)
    pieces = [SPACE] + [chr(c) for c in range(33, 127)]
    for word in SENTENCE + SIDE_WORDS:
        pieces += [SPACE + word[:end] for end in range(1, len(word) + 1)]
    pieces += [SPACE + word for word in FILLER_WORDS]
    for piece in dict.fromkeys(pieces):  # ordered, no repeats
        if len(tokens) == VOCAB_SIZE:
            break
        tokens.append(piece)
        types.append(TokenType.NORMAL)
        scores.append(float(len(piece)))
    if len(tokens) < VOCAB_SIZE:
        raise SystemExit(f"only {len(tokens)} tokens; add filler words")
    return tokens, scores, [int(t) for t in types]


def transitions(tokens: list[str]) -> tuple[dict[int, int], int]:
    """``{token id: next token id}`` for the tokens that steer, and the default next token."""
    ids = {token: i for i, token in enumerate(tokens)}
    words = [ids[SPACE + w] for w in SENTENCE] + [ids["."]]
    following = dict(itertools.pairwise([*words, ids["</s>"]]))
    following[ids[SPACE + "beginning"]] = ids[SPACE + "seven"]
    # 語 ends in the byte 0x9E; 字 is E5 AD 97
    chain = [ids["<0x9E>"], ids["<0xE5>"], ids["<0xAD>"], ids["<0x97>"], ids["."]]
    following.update(itertools.pairwise(chain))
    return following, words[0]


def weights(tokens: list[str]) -> dict[str, np.ndarray]:
    following, default = transitions(tokens)
    targets = sorted(set(following.values()) | {default})
    if len(targets) > N_EMBD:
        raise SystemExit("more distinct next tokens than embedding dimensions")
    dim_of_target = {target: d for d, target in enumerate(targets)}
    vocab = len(tokens)
    embed = np.zeros((vocab, N_EMBD), dtype=np.float32)
    for token in range(vocab):
        embed[token, dim_of_target[following.get(token, default)]] = 1.0
    # RMSNorm turns a one-hot row into sqrt(N_EMBD) times itself
    output = np.zeros((vocab, N_EMBD), dtype=np.float32)
    for target, d in dim_of_target.items():
        output[target, d] = LOGIT_GAP / np.sqrt(N_EMBD)
    tensors = {
        "token_embd.weight": embed,
        "output_norm.weight": np.ones(N_EMBD, dtype=np.float32),
        "output.weight": output,
    }
    for block in range(N_BLOCKS):
        prefix = f"blk.{block}."
        tensors[prefix + "attn_norm.weight"] = np.ones(N_EMBD, dtype=np.float32)
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            tensors[prefix + name + ".weight"] = np.zeros((N_EMBD, N_EMBD), dtype=np.float32)
        tensors[prefix + "ffn_norm.weight"] = np.ones(N_EMBD, dtype=np.float32)
        tensors[prefix + "ffn_gate.weight"] = np.zeros((N_FF, N_EMBD), dtype=np.float32)
        tensors[prefix + "ffn_up.weight"] = np.zeros((N_FF, N_EMBD), dtype=np.float32)
        tensors[prefix + "ffn_down.weight"] = np.zeros((N_EMBD, N_FF), dtype=np.float32)
    return tensors


def write(path: str) -> None:
    from gguf import GGUFWriter

    tokens, scores, types = vocabulary()
    writer = GGUFWriter(path, "llama")
    writer.add_name("lab-tiny-llama")
    writer.add_context_length(N_CTX)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(N_BLOCKS)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_dimension_count(N_EMBD // N_HEAD)
    writer.add_file_type(0)  # all f32
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_unk_token_id(0)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)
    for name, tensor in weights(tokens).items():
        writer.add_tensor(name, tensor)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python lab/llama_model.py OUT.gguf")
    write(sys.argv[1])
