"""Every JSON report the suite writes is checked against the schema the package ships
(``conformance/reporting/report.schema.json``): a report a test wrote that the schema refuses
fails that test, so the schema and the writer cannot drift apart."""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import jsonschema

from conformance.reporting import report_schema
from conformance.reporting.json_report import TOOL

try:
    import jsonschema_rs
except ImportError:  # pragma: no cover - schemathesis brings it
    jsonschema_rs = None

_MARK = f'"tool": "{TOOL}"'
_HEAD = 400
"""Bytes read of a ``.json`` file to tell a report from other JSON (the mark is near the top)."""


@functools.cache
def _validators() -> tuple[Any, jsonschema.Draft202012Validator]:
    schema = report_schema()
    fast = jsonschema_rs.validator_for(schema) if jsonschema_rs is not None else None
    return fast, jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def schema_errors(report: Any) -> list[str]:
    """Why ``report`` does not match the schema (empty when it does); jsonschema_rs answers
    "valid" fast, jsonschema explains."""
    fast, full = _validators()
    if fast is not None and fast.is_valid(report):
        return []
    return [f"{'/'.join(map(str, error.absolute_path)) or '(top)'}: {error.message[:300]}"
            for error in full.iter_errors(report)][:10]


def check_report(report: Any, where: str = "the report") -> None:
    """Fail the test when ``report`` (a parsed JSON report) does not match the schema."""
    errors = schema_errors(report)
    if errors:
        raise AssertionError(f"{where} does not match report.schema.json:\n  "
                             + "\n  ".join(errors))


def is_report(path: Path) -> bool:
    with path.open("rb") as file:
        return _MARK.encode() in file.read(_HEAD)


class ReportChecker:
    """Checks the reports under some directories, each file version once."""

    def __init__(self) -> None:
        self.seen: set[tuple[str, int, int]] = set()

    def check_under(self, roots: Iterable[Path]) -> None:
        for root in roots:
            for directory, _, names in os.walk(root):
                for name in sorted(names):
                    if name.endswith(".json"):
                        self._check(Path(directory, name))

    def _check(self, path: Path) -> None:
        try:
            stat = path.stat()
        except FileNotFoundError:  # removed while walking
            return
        key = (str(path), stat.st_mtime_ns, stat.st_size)
        if key in self.seen:
            return
        self.seen.add(key)
        if not is_report(path):
            return
        check_report(json.loads(path.read_text(encoding="utf-8")), str(path))
