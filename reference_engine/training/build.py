"""Training the tokenizer and the n-gram counts, and writing the artifact files.

``train`` is pure (documents in, tokenizer and counts out); ``write_artifacts`` writes
``tokenizer.json``, ``model.npz`` and ``manifest.json``; ``build_artifacts`` does both from the
shipped corpus. Every step is deterministic, so rebuilding gives byte-identical files and the same
version string; a changed corpus or training code shows up as a new version.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reference_engine.artifacts.manifest import (
    MODEL_FILE,
    TOKENIZER_FILE,
    sha256_file,
    write_manifest,
)
from reference_engine.model.storage import NgramCounts, save_counts
from reference_engine.tokenizer import EOT, Tokenizer

from .bpe_trainer import train_bpe
from .corpus import CORPUS_DIR, CORPUS_FILES, load_documents
from .ngram_counter import count_ngrams, token_stream

DEFAULT_VOCAB_SIZE = 4096
DEFAULT_ORDER = 4
SPECIAL_TOKENS: tuple[str, ...] = (EOT,)


@dataclass(frozen=True)
class TrainingResult:
    """What training produced, plus figures worth recording in the manifest."""

    tokenizer: Tokenizer
    counts: NgramCounts
    documents: int
    training_tokens: int


def train(
    documents: Sequence[str], vocab_size: int = DEFAULT_VOCAB_SIZE, order: int = DEFAULT_ORDER
) -> TrainingResult:
    """Learn BPE merges to reach ``vocab_size`` (if the text allows), then count n-grams."""
    num_merges = vocab_size - 256 - len(SPECIAL_TOKENS)
    if num_merges < 0:
        raise ValueError(f"vocab_size must be at least {256 + len(SPECIAL_TOKENS)}")
    for document in documents:
        if EOT in document:
            raise ValueError("documents must not contain the document separator")
    tokenizer = Tokenizer(train_bpe(documents, num_merges), SPECIAL_TOKENS)
    stream = token_stream([tokenizer.encode(doc) for doc in documents], tokenizer.eot_id)
    counts = count_ngrams(stream, order, tokenizer.vocab_size)
    return TrainingResult(tokenizer, counts, len(documents), int(stream.size))


def write_artifacts(
    out_dir: Path, result: TrainingResult, corpus_hashes: Mapping[str, str]
) -> dict[str, Any]:
    """Write the artifact files and their manifest into ``out_dir``; return the manifest."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / TOKENIZER_FILE).write_text(
        result.tokenizer.to_json(), encoding="utf-8", newline="\n"
    )
    save_counts(result.counts, out_dir / MODEL_FILE)
    extra: dict[str, Any] = {
        "name": "refmodel",
        "model": "interpolated modified Kneser-Ney n-gram, uniform floor",
        "tokenizer": "byte-level BPE, GPT-2-style pre-tokenization",
        "order": result.counts.order,
        "vocab_size": result.tokenizer.vocab_size,
        "eot_id": result.tokenizer.eot_id,
        "special_tokens": dict(result.tokenizer.special_tokens),
        "merges": len(result.tokenizer.merges),
        "documents": result.documents,
        "training_tokens": result.training_tokens,
        "corpus_sha256": dict(corpus_hashes),
    }
    return write_manifest(out_dir, extra)


def build_artifacts(
    out_dir: Path,
    corpus_dir: Path = CORPUS_DIR,
    files: Sequence[str] = CORPUS_FILES,
    vocab_size: int = DEFAULT_VOCAB_SIZE,
    order: int = DEFAULT_ORDER,
) -> dict[str, Any]:
    """Train on the corpus files and write the artifacts; return the manifest."""
    documents = load_documents(corpus_dir, files)
    result = train(documents, vocab_size=vocab_size, order=order)
    hashes = {name: sha256_file(Path(corpus_dir) / name) for name in files}
    return write_artifacts(out_dir, result, hashes)
