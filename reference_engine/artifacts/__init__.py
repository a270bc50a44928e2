"""The trained tokenizer and model shipped with the package, and their loader.

``load()`` returns the shipped :class:`Artifacts` (tokenizer, model, version, fingerprint),
loading them once per process on first use, thread-safely; ``load_from(directory)`` loads another
build (e.g. the output of ``python -m reference_engine.training --out DIR``) without caching.
The data files live beside this module: ``tokenizer.json``, ``model.npz`` and ``manifest.json``
(sha256 of each file, version, training details). They are rebuilt with
``python -m reference_engine.training``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from reference_engine.model import LanguageModel, estimate, load_counts
from reference_engine.tokenizer import Tokenizer

from .manifest import (
    MODEL_FILE,
    TOKENIZER_FILE,
    ArtifactError,
    fingerprint,
    read_manifest,
)

ARTIFACTS_DIR = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Artifacts:
    """A loaded tokenizer + model pair and the version that identifies them."""

    tokenizer: Tokenizer
    model: LanguageModel
    version: str

    @property
    def fingerprint(self) -> str:
        """Value for the API's ``system_fingerprint``: ``fp_`` and 10 hex digits of the version."""
        return fingerprint(self.version)


def load_from(directory: Path) -> Artifacts:
    """Load and verify the artifacts in ``directory`` (not cached); raises ArtifactError."""
    directory = Path(directory)
    manifest = read_manifest(directory)
    version = str(manifest["version"])
    try:
        tokenizer = Tokenizer.from_file(directory / TOKENIZER_FILE)
        counts = load_counts(directory / MODEL_FILE)
    except (OSError, ValueError, KeyError) as error:
        raise ArtifactError(f"cannot load artifacts from {directory}: {error}") from error
    if counts.vocab_size != tokenizer.vocab_size:
        raise ArtifactError("model and tokenizer disagree on the vocabulary size")
    model = LanguageModel(estimate(counts), version)
    return Artifacts(tokenizer=tokenizer, model=model, version=version)


_lock = threading.Lock()
_loaded: Artifacts | None = None


def load() -> Artifacts:
    """The shipped artifacts, loaded on first call and shared afterwards (thread-safe)."""
    global _loaded
    if _loaded is None:
        with _lock:
            if _loaded is None:
                _loaded = load_from(ARTIFACTS_DIR)
    return _loaded


__all__ = ["ARTIFACTS_DIR", "ArtifactError", "Artifacts", "load", "load_from"]
