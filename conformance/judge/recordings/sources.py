"""Which recording a file is, found by its content (never its name), and its exchanges.

A file is a HAR (a JSON object whose key is ``log``), a VCR cassette (YAML, or vcrpy's JSON,
with ``interactions``; Ruby VCR's ``http_interactions``) or a report of this harness (a JSON
object with ``format_version``, ``results`` or ``exchanges``); anything else is none of them.
A directory stands for every such file under it. The first 64 KiB decide; JSON files are then
read as a stream.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import ijson
import yaml

from conformance.errors import UsageError

from .cassette import load_yaml, read_cassette
from .har import read_har
from .recorded import Recorded
from .saved import read_report

Kind = Literal["HAR", "cassette", "report"]
SNIFF_BYTES = 64 << 10
MAX_CASSETTE_BYTES = 256 << 20
"""A cassette is read whole: past this it is refused rather than read."""
REPORT_KEYS = frozenset({"format_version", "results", "exchanges", "summary", "coverage"})
_YAML_CASSETTE = re.compile(rb"^(http_)?interactions\s*:", re.MULTILINE)


class UnreadableInput(UsageError):
    """An input that is not a recording, or a recording that cannot be read: one line."""


def _top_keys(head: bytes) -> list[str]:
    """The top-level keys of the JSON object ``head`` begins (as far as it goes)."""
    keys: list[str] = []
    try:
        for prefix, event, value in ijson.parse(io.BytesIO(head)):
            if event == "map_key" and prefix == "":
                keys.append(str(value))
    except (ijson.JSONError, ValueError):  # cut at SNIFF_BYTES, or no JSON (bytes not UTF-8)
        pass
    return keys


def kind_of(path: Path) -> Kind | None:
    """What recording the file at ``path`` is, from its first bytes; None: none."""
    with path.open("rb") as handle:
        head = handle.read(SNIFF_BYTES)
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"{"):
        keys = _top_keys(text)
        if "log" in keys:
            return "HAR"
        if "interactions" in keys or "http_interactions" in keys:
            return "cassette"
        if REPORT_KEYS & set(keys):
            return "report"
        return None
    if b"\0" not in head and _YAML_CASSETTE.search(head):
        return "cassette"
    return None


@dataclass(frozen=True)
class Input:
    """One file to read, and what it is."""

    path: Path
    kind: Kind

    @property
    def name(self) -> str:
        return str(self.path)


def inputs(given: Iterable[str]) -> tuple[list[Input], list[str]]:
    """The files the arguments name (a directory: every recording under it, in name order),
    and the files of those directories that are no recording. A file named on its own that is
    none, or a path that does not exist, is an :class:`UnreadableInput`."""
    found: list[Input] = []
    others: list[str] = []
    for name in given:
        path = Path(name)
        if path.is_dir():
            for file in sorted(p for p in path.rglob("*") if p.is_file()):
                kind = _kind_or_none(file)
                if kind is None:
                    others.append(str(file))
                else:
                    found.append(Input(file, kind))
            continue
        if not path.exists():
            raise UnreadableInput(f"{name}: no such file or directory")
        kind = _kind_or_none(path)
        if kind is None:
            raise UnreadableInput(
                f"{name} is neither a HAR file, a VCR cassette nor a conformance report "
                "(judged by content: a HAR is a JSON object with \"log\", a cassette has "
                "\"interactions\", a report \"format_version\" and \"exchanges\")")
        found.append(Input(path, kind))
    return found, others


def _kind_or_none(path: Path) -> Kind | None:
    try:
        return kind_of(path)
    except OSError as exc:
        raise UnreadableInput(f"{path}: cannot read it: {exc.strerror or exc}") from None


def exchanges(source: Input) -> Iterator[Recorded | str]:
    """Every exchange the file holds, in order (a string for an entry that is not one);
    :class:`UnreadableInput` where the file stops being readable (JSON cut short)."""
    try:
        if source.kind == "cassette":
            yield from _cassette(source)
            return
        with source.path.open("rb") as handle:
            reader = read_har if source.kind == "HAR" else read_report
            yield from reader(source.name, handle)
    except ijson.JSONError as exc:
        what = ("ends early, cut short" if _cut_short(exc)
                else "is not valid JSON")
        raise UnreadableInput(f"{source.name}: the {source.kind} {what} "
                              f"({_first_line(exc)})") from None
    except UnicodeDecodeError as exc:
        raise UnreadableInput(f"{source.name}: the {source.kind} is not valid JSON (a string "
                              f"that is not UTF-8: {exc.reason})") from None
    except OSError as exc:
        raise UnreadableInput(f"{source.name}: cannot read it: {exc.strerror or exc}") from None


def _cassette(source: Input) -> Iterator[Recorded | str]:
    size = os.path.getsize(source.path)
    if size > MAX_CASSETTE_BYTES:
        raise UnreadableInput(f"{source.name}: a cassette of {size >> 20} MiB is more than "
                              f"the {MAX_CASSETTE_BYTES >> 20} MiB read whole")
    raw = source.path.read_bytes()
    try:
        document = load_yaml(raw)  # vcrpy's JSON serializer writes JSON, which YAML reads too
    except yaml.YAMLError as exc:
        raise UnreadableInput(f"{source.name}: the cassette is not valid YAML "
                              f"({_first_line(exc)})") from None
    except RecursionError:
        raise UnreadableInput(f"{source.name}: the cassette nests too deep to read") from None
    try:
        yield from read_cassette(source.name, document)
    except ValueError as exc:
        raise UnreadableInput(f"{source.name}: not a cassette: {exc}") from None


def _cut_short(exc: Exception) -> bool:
    """Whether ijson stopped at the end of the bytes (yajl's "premature EOF", the Python
    backend's "Incomplete JSON content") rather than at a wrong one."""
    text = str(exc).lower()
    return "premature eof" in text or "incomplete" in text


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__
