"""The embedded mock: ``python -m mockserver --port 0`` as a child process, over HTTP only.

The harness never imports the mock (it must judge it as it would any server). It starts the
mock with the running interpreter, reads its one ready line (``mockserver: serving
http://HOST:PORT/v1 (FriendliAI: http://HOST:PORT/dedicated/v1)``) and stops it with SIGTERM
(then SIGKILL) when done.
"""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from urllib.parse import urlsplit

import spec

READY = re.compile(r"serving (?P<openai>https?://\S+?)/?\s+\(FriendliAI: (?P<friendli>https?://\S+?)/?\)")
START_TIMEOUT = 60.0


def serving_args(profile_ref: str | None) -> list[str]:
    """The mock's arguments for a run with ``--profile`` ``profile_ref`` (a name or a path, as
    typed): a profile file is served too (on its own paths, with its statuses and unknown-field
    policy), so the embedded mock answers as the file says its server does and a clean mock
    passes under it."""
    if profile_ref and profile_ref.endswith((".yaml", ".yml")) and Path(profile_ref).is_file():
        return ["--profile", str(Path(profile_ref).resolve())]
    if profile_ref in spec.profile_names() and profile_ref not in BUILT_IN_ROUTES:
        return ["--profile", profile_ref]
    return []


BUILT_IN_ROUTES = ("openai", "openai-compatible", "friendli")
"""Shipped profiles the mock's built-in routes already answer (``/v1`` strictly, and
``/dedicated/v1``); any other shipped profile (``vllm``) is served with ``--profile NAME``."""


class EmbeddedMockError(RuntimeError):
    """The mock could not be started (its stderr tail is in the message)."""


class EmbeddedMock:
    """A running mock child process; use as a context manager."""

    def __init__(self, args: Sequence[str] = (), *, start_timeout: float = START_TIMEOUT) -> None:
        self.args = list(args)
        self.start_timeout = start_timeout
        self.process: subprocess.Popen[str] | None = None
        self.openai_url = ""
        self.friendli_url = ""
        self._stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")

    def url_for(self, profile: spec.Profile) -> str:
        """The base URL serving ``profile``: the mock's origin and the profile's ``base_path``
        (the mock serves the shipped profiles' paths, and a profile file's when started with
        :func:`serving_args`). A name resolves first: ``url_for(spec.get_profile(name))``."""
        parts = urlsplit(self.openai_url)
        return f"{parts.scheme}://{parts.netloc}{profile.base_path}"

    def start(self) -> EmbeddedMock:
        command = [sys.executable, "-m", "mockserver", "--host", "127.0.0.1", "--port", "0"]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(
            command + self.args, stdout=subprocess.PIPE, stderr=self._stderr,
            stdin=subprocess.DEVNULL, text=True, env=env,
        )
        lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=_pump, args=(self.process, lines), daemon=True).start()
        try:
            while True:
                line = lines.get(timeout=self.start_timeout)
                if line is None:
                    raise EmbeddedMockError(f"the mock exited: {self._tail()}")
                match = READY.search(line)
                if match:
                    self.openai_url = match["openai"]
                    self.friendli_url = match["friendli"]
                    return self
        except queue.Empty:
            self.stop()
            raise EmbeddedMockError(
                f"the mock printed no ready line within {self.start_timeout:g} s: {self._tail()}"
            ) from None
        except BaseException:
            self.stop()
            raise

    def _tail(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read()[-2000:].strip() or "(no stderr)"

    def stop(self) -> None:
        process = self.process
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
        if process is not None and process.stdout is not None:
            process.stdout.close()
        self._stderr.close()

    def __enter__(self) -> EmbeddedMock:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _pump(process: subprocess.Popen[str], lines: queue.Queue[str | None]) -> None:
    """Forward the mock's stdout lines (and keep draining it so the mock never blocks)."""
    stream = process.stdout
    if stream is None:
        lines.put(None)
        return
    try:
        for line in stream:
            lines.put(line)
    except (OSError, ValueError):
        pass
    lines.put(None)
