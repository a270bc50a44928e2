"""The n-gram count tables of the model, and their byte-for-byte deterministic ``.npz`` file.

What is stored are integer counts only (no probabilities): the Kneser-Ney estimates are derived
at load time with a fixed sequence of IEEE operations, so the artifact is small, exact and
independent of floating-point details of the machine that trained it.

Layout: for each history length ``n`` in ``1 .. order-1`` a CSR-like table whose rows are the
histories (``contexts``, shape ``(rows, n)``, sorted lexicographically), ``offsets`` into the
``followers`` (sorted within a row) and their ``counts``. The top level holds raw counts; lower
levels and ``unigram`` hold Kneser-Ney continuation counts (distinct left neighbours).

``numpy.savez`` stamps the current time into the zip, so files are written here with fixed zip
metadata instead; that is what makes two training runs produce identical bytes.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

FORMAT_VERSION = 1
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


@dataclass(frozen=True)
class CountLevel:
    """Counts of the tokens that follow each history of one length."""

    contexts: np.ndarray  # (rows, n) token ids, rows sorted lexicographically
    offsets: np.ndarray  # (rows + 1,) start of each row's followers
    followers: np.ndarray  # (entries,) token ids, ascending within a row
    counts: np.ndarray  # (entries,) positive counts

    @property
    def history_length(self) -> int:
        """Number of tokens in each history of this level."""
        return int(self.contexts.shape[1])


@dataclass(frozen=True)
class NgramCounts:
    """Everything the model is estimated from."""

    order: int
    vocab_size: int
    unigram: np.ndarray  # (vocab_size,) continuation counts, zero for unseen tokens
    levels: tuple[CountLevel, ...]  # history lengths 1 .. order-1


def _smallest_uint(values: np.ndarray) -> np.ndarray:
    top = int(values.max()) if values.size else 0
    for dtype in (np.uint16, np.uint32, np.uint64):
        if top <= np.iinfo(dtype).max:
            return np.ascontiguousarray(values, dtype=dtype)
    raise ValueError("value too large to store")


def _npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.ascontiguousarray(array), allow_pickle=False)
    return buffer.getvalue()


def save_counts(counts: NgramCounts, path: Path) -> None:
    """Write the tables as an uncompressed ``.npz`` with deterministic bytes."""
    arrays: dict[str, np.ndarray] = {
        "meta": np.array([FORMAT_VERSION, counts.order, counts.vocab_size], dtype=np.int64),
        "unigram": _smallest_uint(counts.unigram),
    }
    for level in counts.levels:
        n = level.history_length
        arrays[f"contexts{n}"] = _smallest_uint(level.contexts)
        arrays[f"offsets{n}"] = _smallest_uint(level.offsets)
        arrays[f"followers{n}"] = _smallest_uint(level.followers)
        arrays[f"counts{n}"] = _smallest_uint(level.counts)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        for name in sorted(arrays):
            info = zipfile.ZipInfo(name + ".npy", date_time=_ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_STORED
            info.create_system = 3
            info.external_attr = 0o644 << 16
            archive.writestr(info, _npy_bytes(arrays[name]))


def load_counts(path: Path) -> NgramCounts:
    """Read what ``save_counts`` wrote; raises ValueError on a format mismatch."""
    with np.load(path, allow_pickle=False) as data:
        meta = data["meta"]
        if int(meta[0]) != FORMAT_VERSION:
            raise ValueError(f"unsupported n-gram file format {int(meta[0])}")
        order, vocab_size = int(meta[1]), int(meta[2])
        levels = tuple(
            CountLevel(
                contexts=data[f"contexts{n}"].astype(np.int64),
                offsets=data[f"offsets{n}"].astype(np.int64),
                followers=data[f"followers{n}"].astype(np.intp),
                counts=data[f"counts{n}"].astype(np.int64),
            )
            for n in range(1, order)
        )
        unigram = data["unigram"].astype(np.int64)
    result = NgramCounts(order=order, vocab_size=vocab_size, unigram=unigram, levels=levels)
    validate(result)
    return result


def validate(counts: NgramCounts) -> None:
    """Check shapes and CSR invariants; raises ValueError when the tables are inconsistent."""
    if counts.order < 2 or len(counts.levels) != counts.order - 1:
        raise ValueError("n-gram tables do not match their order")
    if counts.unigram.shape != (counts.vocab_size,):
        raise ValueError("unigram table has the wrong length")
    for n, level in enumerate(counts.levels, start=1):
        rows = level.contexts.shape[0]
        if level.contexts.ndim != 2 or level.contexts.shape[1] != n:
            raise ValueError(f"level {n}: contexts have the wrong shape")
        if level.offsets.shape != (rows + 1,) or int(level.offsets[0]) != 0:
            raise ValueError(f"level {n}: offsets have the wrong shape")
        if (
            int(level.offsets[-1]) != level.followers.size
            or level.counts.size != level.followers.size
        ):
            raise ValueError(f"level {n}: followers and counts do not match the offsets")
        if rows and bool(np.any(np.diff(level.offsets) <= 0)):
            raise ValueError(f"level {n}: empty or unordered rows")
        if level.followers.size and (
            int(level.followers.min()) < 0 or int(level.followers.max()) >= counts.vocab_size
        ):
            raise ValueError(f"level {n}: follower id out of range")
        if level.counts.size and int(level.counts.min()) <= 0:
            raise ValueError(f"level {n}: non-positive count")
