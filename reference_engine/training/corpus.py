"""The training corpus: which files it is made of, and how they split into documents.

The corpus lives in ``corpus/`` beside this module and ships with the package, so the artifacts
can be rebuilt anywhere without network access. Each file is UTF-8 text whose documents are
separated by the literal ``<|endoftext|>``; the model learns that token from those boundaries.
``PROVENANCE.md`` there says where each file came from and under which licence.

Running ``python -m reference_engine.training.corpus`` rewrites the Python-documentation file from
the ``pydoc_data`` module of the running CPython (the shipped file came from CPython 3.11.7).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

CORPUS_DIR = Path(__file__).resolve().parent / "corpus"
DOCUMENT_SEPARATOR = "<|endoftext|>"
PYDOC_FILE = "python_docs_topics.txt"
PROSE_FILE = "original_prose.txt"
# A fixed list, not a glob: the order of documents is part of what makes training deterministic,
# and the folder also holds the licence and provenance files, which are not training text.
CORPUS_FILES: tuple[str, ...] = (PYDOC_FILE, PROSE_FILE)


def split_documents(text: str) -> list[str]:
    """Split a corpus file into documents, dropping empty ones (e.g. after a final separator)."""
    return [doc for doc in text.split(DOCUMENT_SEPARATOR) if doc]


def load_documents(corpus_dir: Path = CORPUS_DIR, files: Sequence[str] = CORPUS_FILES) -> list[str]:
    """Read the corpus files in their fixed order and return all documents in order."""
    documents: list[str] = []
    for name in files:
        path = corpus_dir / name
        if not path.is_file():
            raise FileNotFoundError(f"corpus file missing: {path}")
        # newline="" keeps the bytes exactly as stored, whatever the platform's newline convention.
        with path.open(encoding="utf-8", newline="") as handle:
            documents.extend(split_documents(handle.read()))
    return documents


def pydoc_topics_text() -> str:
    """Return the ``pydoc_data`` topics of the running CPython as one corpus file's text.

    Topics are sorted by their key so the file does not depend on dict order, and joined by the
    document separator (no extra newlines: each topic already ends with one).
    """
    from pydoc_data.topics import topics

    for key, value in topics.items():
        if DOCUMENT_SEPARATOR in value:
            raise ValueError(f"pydoc topic {key!r} contains the document separator")
    return DOCUMENT_SEPARATOR.join(topics[key] for key in sorted(topics)) + DOCUMENT_SEPARATOR


def main() -> int:
    """Rewrite the shipped Python-documentation corpus file from this interpreter's stdlib."""
    target = CORPUS_DIR / PYDOC_FILE
    text = pydoc_topics_text()
    with target.open("w", encoding="utf-8", newline="") as handle:
        handle.write(text)
    version = ".".join(str(part) for part in sys.version_info[:3])
    print(f"wrote {target} ({len(text.encode('utf-8'))} bytes) from CPython {version}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
