"""The artifact manifest: which files make up a trained model, their sha256, and the version.

``manifest.json`` lists every artifact file with its sha256. The version string
``refmodel-<format>-<8 hex>`` is derived from those hashes, so any change to the tokenizer or the
counts gives a new version (and a new ``system_fingerprint``), and loading verifies the files
against the manifest, so a corrupted or half-updated checkout fails loudly instead of serving a
different model under the old name.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

MANIFEST_FILE = "manifest.json"
TOKENIZER_FILE = "tokenizer.json"
MODEL_FILE = "model.npz"
ARTIFACT_FILES: tuple[str, ...] = (MODEL_FILE, TOKENIZER_FILE)
MANIFEST_FORMAT = "refmodel-manifest-1"
VERSION_PREFIX = "refmodel-1"


class ArtifactError(ValueError):
    """The artifact files are missing, corrupted or inconsistent with their manifest."""


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def artifact_version(file_hashes: Mapping[str, str]) -> str:
    """Version string derived from the artifact files' hashes (sorted by file name)."""
    lines = "".join(f"{name} {file_hashes[name]}\n" for name in sorted(file_hashes))
    return f"{VERSION_PREFIX}-{hashlib.sha256(lines.encode('utf-8')).hexdigest()[:8]}"


def fingerprint(version: str) -> str:
    """A ``system_fingerprint`` value for a version: ``fp_`` and 10 hex digits."""
    return "fp_" + hashlib.sha256(version.encode("utf-8")).hexdigest()[:10]


def write_manifest(directory: Path, extra: Mapping[str, Any]) -> dict[str, Any]:
    """Hash the artifact files in ``directory`` and write ``manifest.json`` deterministically."""
    directory = Path(directory)
    hashes = {name: sha256_file(directory / name) for name in ARTIFACT_FILES}
    manifest: dict[str, Any] = {
        "format": MANIFEST_FORMAT,
        "version": artifact_version(hashes),
        "files": hashes,
        **extra,
    }
    text = json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    (directory / MANIFEST_FILE).write_text(text, encoding="utf-8", newline="\n")
    return manifest


def read_manifest(directory: Path) -> dict[str, Any]:
    """Read and verify the manifest of ``directory``; raises ArtifactError on any mismatch."""
    directory = Path(directory)
    path = directory / MANIFEST_FILE
    try:
        manifest: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ArtifactError(f"cannot read {path}: {error}") from error
    if manifest.get("format") != MANIFEST_FORMAT:
        raise ArtifactError(f"{path}: unsupported manifest format {manifest.get('format')!r}")
    hashes = manifest.get("files", {})
    if sorted(hashes) != sorted(ARTIFACT_FILES):
        raise ArtifactError(f"{path}: expected files {list(ARTIFACT_FILES)}, got {sorted(hashes)}")
    for name, expected in hashes.items():
        try:
            actual = sha256_file(directory / name)
        except OSError as error:
            raise ArtifactError(f"cannot read artifact {name}: {error}") from error
        if actual != expected:
            raise ArtifactError(f"artifact {name} has sha256 {actual}, manifest says {expected}")
    if manifest.get("version") != artifact_version(hashes):
        raise ArtifactError(f"{path}: version does not match the file hashes")
    return manifest
