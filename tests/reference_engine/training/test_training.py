"""Training: deterministic output, shipped artifacts match their manifest and their corpus."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from reference_engine.artifacts import ARTIFACTS_DIR, ArtifactError, load, load_from
from reference_engine.artifacts.manifest import ARTIFACT_FILES, MANIFEST_FILE, read_manifest
from reference_engine.model import estimate
from reference_engine.training import train, write_artifacts
from reference_engine.training.corpus import CORPUS_DIR, CORPUS_FILES, load_documents
from reference_engine.training.ngram_counter import count_ngrams, token_stream

REPO_ROOT = Path(__file__).resolve().parents[3]


def _small_slice() -> list[str]:
    documents = load_documents()
    return [doc[:6000] for doc in documents[:6]] + documents[-2:]


def _train_small(out_dir: Path) -> dict[str, bytes]:
    write_artifacts(out_dir, train(_small_slice(), vocab_size=600, order=4), {})
    return {name: (out_dir / name).read_bytes() for name in (*ARTIFACT_FILES, MANIFEST_FILE)}


def test_training_twice_gives_identical_bytes(tmp_path: Path) -> None:
    first = _train_small(tmp_path / "a")
    second = _train_small(tmp_path / "b")
    assert first == second
    small = load_from(tmp_path / "a")
    assert small.tokenizer.vocab_size == 600
    logprobs = small.model.logprobs(small.tokenizer.encode("The Python"))
    assert np.all(np.isfinite(logprobs)) and np.all(logprobs < 0)


def test_bpe_training_ignores_hash_seed(tmp_path: Path) -> None:
    script = (
        "import sys; from reference_engine.training import train;"
        "from reference_engine.training.corpus import load_documents;"
        "docs = [d[:3000] for d in load_documents()[:5]] + load_documents()[-2:];"
        "sys.stdout.write(train(docs, vocab_size=500, order=3).tokenizer.to_json())"
    )
    outputs = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO_ROOT)}
        result = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        )
        outputs.add(result.stdout)
    assert len(outputs) == 1


def test_shipped_manifest_matches_files() -> None:
    manifest = json.loads((ARTIFACTS_DIR / MANIFEST_FILE).read_text(encoding="utf-8"))
    for name, expected in manifest["files"].items():
        assert hashlib.sha256((ARTIFACTS_DIR / name).read_bytes()).hexdigest() == expected
    assert read_manifest(ARTIFACTS_DIR)["version"] == load().version == load().model.version
    assert load().version.startswith("refmodel-1-")
    fingerprint = load().fingerprint
    assert fingerprint.startswith("fp_") and len(fingerprint) == 13
    int(fingerprint[3:], 16)


def test_shipped_manifest_records_corpus() -> None:
    manifest = read_manifest(ARTIFACTS_DIR)
    for name in CORPUS_FILES:
        digest = hashlib.sha256((CORPUS_DIR / name).read_bytes()).hexdigest()
        assert manifest["corpus_sha256"][name] == digest
    assert manifest["vocab_size"] == 4096 and manifest["order"] == 4
    total = sum((CORPUS_DIR / name).stat().st_size for name in CORPUS_FILES)
    assert total < 1_000_000
    provenance = (CORPUS_DIR / "PROVENANCE.md").read_text(encoding="utf-8")
    assert all(name in provenance for name in CORPUS_FILES)


def test_corrupted_artifacts_are_rejected(tmp_path: Path) -> None:
    for name in (*ARTIFACT_FILES, MANIFEST_FILE):
        (tmp_path / name).write_bytes((ARTIFACTS_DIR / name).read_bytes())
    data = bytearray((tmp_path / "tokenizer.json").read_bytes())
    data[-10] ^= 1
    (tmp_path / "tokenizer.json").write_bytes(bytes(data))
    with pytest.raises(ArtifactError):
        load_from(tmp_path)


def test_counts_are_nested_and_estimable() -> None:
    stream = token_stream([[1, 2, 3, 1, 2, 4], [2, 3, 1], [5]], eot_id=9)
    counts = count_ngrams(stream, order=4, vocab_size=10)
    assert int(counts.levels[-1].counts.sum()) == stream.size - 3
    tables = estimate(counts)
    for level in tables.levels:
        assert np.all(level.probs > 0) and np.all(level.gamma > 0)
    assert abs(float(np.sum(tables.base)) - 1.0) < 1e-12


def test_cli_rebuilds_the_shipped_artifacts_exactly(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    subprocess.run(
        [sys.executable, "-m", "reference_engine.training", "--out", str(tmp_path)],
        env=env,
        capture_output=True,
        check=True,
    )
    for name in (*ARTIFACT_FILES, MANIFEST_FILE):
        assert (tmp_path / name).read_bytes() == (ARTIFACTS_DIR / name).read_bytes(), name
