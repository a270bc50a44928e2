"""``python -m reference_engine.training [--out DIR]``: rebuild the artifacts from the corpus.

Without ``--out`` it overwrites the shipped artifacts in ``reference_engine/artifacts/``. The
output is deterministic: running it twice gives byte-identical files.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path

from reference_engine.artifacts.manifest import ARTIFACT_FILES

from .build import DEFAULT_ORDER, DEFAULT_VOCAB_SIZE, build_artifacts
from .corpus import CORPUS_DIR

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "artifacts"


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments, train, write, and print a one-line summary per file."""
    parser = argparse.ArgumentParser(
        prog="python -m reference_engine.training", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory")
    parser.add_argument("--corpus", type=Path, default=CORPUS_DIR, help="corpus directory")
    parser.add_argument("--vocab-size", type=int, default=DEFAULT_VOCAB_SIZE)
    parser.add_argument("--order", type=int, default=DEFAULT_ORDER)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    manifest = build_artifacts(
        args.out, corpus_dir=args.corpus, vocab_size=args.vocab_size, order=args.order
    )
    elapsed = time.perf_counter() - started
    for name in ARTIFACT_FILES:
        size = (args.out / name).stat().st_size
        print(f"{name}: {size} bytes sha256 {manifest['files'][name]}")
    print(
        f"version {manifest['version']}: vocab {manifest['vocab_size']}, order "
        f"{manifest['order']}, {manifest['training_tokens']} training tokens, {elapsed:.1f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
