"""A recorded run judged again by today's catalog: its exchanges served back by ``mockserver
--replay`` (a child process, as the harness tests any server) and ``conformance run`` against
them (a child process too, as ``lab/record.py`` runs it: the command line that reaches this
module is not imported back), with the profile, model, features and options the recording was
made with.

The verdicts a report holds are those of the catalog that wrote it; after a rule changes, a
recording (the lab's fixtures) says what the old rule said. Judging it again is what
``lab/run verdicts`` does, and what ``conformance matrix --replay`` does for any report of
``run``. A fuzz report cannot be judged so: its requests are not the catalog's.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import spec
from conformance.reporting.markdown import SUMMARY_VARIABLE
from conformance.target.embedded import EmbeddedMock, EmbeddedMockError

from .reports import ReportError, SavedReport, load_report

NOT_REPLAYED = ("--header", "--baseline")
"""Echoed options a replay does without: the replay matches requests on their bodies."""


def _feature_flags(target: dict[str, Any]) -> list[str]:
    """``--feature`` / ``--no-feature`` flags that make the profile claim what the run did."""
    claimed = target.get("features")
    if not isinstance(claimed, list):
        return []
    try:
        default = spec.get_profile(str(target.get("profile"))).features
    except (KeyError, OSError, ValueError):
        return []
    return ([f"--feature={name}" for name in sorted(set(claimed) - default)]
            + [f"--no-feature={name}" for name in sorted(default - set(claimed))])


def _echoed(options: Any) -> list[str]:
    """The options the report echoes (``--timeout 3``), as arguments again."""
    args: list[str] = []
    for option in options if isinstance(options, list) else []:
        flag, _, value = str(option).partition(" ")
        if flag.startswith("--") and flag not in NOT_REPLAYED:
            args += [flag, value] if value else [flag]
    return args


def replay_arguments(data: dict[str, Any]) -> list[str]:
    """The ``conformance run`` arguments a recording was made with, as far as it says."""
    target = data.get("target") or {}
    args = ["--profile", str(target.get("profile", "openai"))]
    if target.get("model"):
        args += ["--model", str(target["model"])]
    return args + _feature_flags(target) + _echoed(data.get("options"))


def rejudge(path: str | Path, extra: Sequence[str] = ()) -> SavedReport:
    """The report at ``path`` judged again (``extra``: more ``conformance run`` arguments);
    :class:`ReportError` with one line when it cannot be."""
    recorded = load_report(path)
    if recorded.fuzz:
        raise ReportError(f"{path} is a fuzz report: only a report of `conformance run` can "
                          "be replayed and judged again")
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    base_path = urlsplit(str((data.get("target") or {}).get("base_url", "/v1"))).path
    replay = ["--replay", str(path), "--replay-timing", "none"]
    with tempfile.TemporaryDirectory() as folder:
        judged = Path(folder, "judged.json")
        try:
            with EmbeddedMock(replay) as mock:
                root = mock.openai_url.rsplit("/v1", 1)[0]
                done = subprocess.run(
                    [sys.executable, "-m", "conformance", "run", "-q", "--base-url",
                     root + base_path, *replay_arguments(data), *extra, "--json", str(judged)],
                    env={**os.environ, SUMMARY_VARIABLE: ""},  # a replay is no CI step
                    capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False)
        except EmbeddedMockError as exc:
            raise ReportError(f"{path}: the replay did not start: {exc}") from None
        if done.returncode not in (0, 1) or not judged.exists():
            raise ReportError(f"{path}: judging the replay failed: "
                              f"{done.stderr.strip()[-500:]}")
        report = load_report(judged)
    return dataclasses.replace(report, path=str(path), base_url=recorded.base_url)
