"""Starting and stopping exactly the processes the lab started.

A server runs in its own session (its own process group), its output goes to a log file
beside a pid file (``$LAB_HOME/run/NAME.json``: pid, its start time, port, command). ``stop``
signals that process group only after checking that the pid is still the process started then
(``/proc/PID/stat``'s start time): never a kill by name, never a stranger that reused the pid.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .servers import Server, lab_home

START_TIMEOUT = 180.0
STOP_TIMEOUT = 10.0
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}
"""The servers this process started, by pid: kept so ``stop`` reaps them through their Popen
(a Popen dropped while its process runs warns, an error under pytest)."""


@dataclass(frozen=True)
class Running:
    name: str
    pid: int
    port: int
    command: list[str]
    started: str
    """Field 22 of ``/proc/PID/stat``: the process's start time in clock ticks since boot."""
    upstream: str = ""
    """A gateway's upstream: the base URL it forwards to."""

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def run_folder() -> Path:
    folder = lab_home() / "run"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def running(server: Server) -> Running | None:
    """The lab's process of ``server`` if it still runs, else None (a stale pid file goes)."""
    pid_file = run_folder() / f"{server.name}.json"
    if not pid_file.exists():
        return None
    record = json.loads(pid_file.read_text())
    state = Running(server.name, record["pid"], record["port"], record["command"],
                    record["started"], record.get("upstream", ""))
    if _runs(state):
        return state
    pid_file.unlink()
    return None


def _start_time(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()  # after "pid (comm)"
    if fields and fields[0] == "Z":
        return None  # a zombie has ended
    return fields[19] if len(fields) > 19 else None


def _runs(state: Running) -> bool:
    return _start_time(state.pid) == state.started


def start(server: Server, port: int, log: Callable[[str], None] = print,
          upstream: str | None = None) -> Running:
    """Start ``server`` on 127.0.0.1:``port`` and wait until it answers HTTP (a gateway: until
    its upstream, the base URL ``upstream`` or our mock, answers too)."""
    if (already := running(server)) is not None:
        raise SystemExit(f"lab: {server.name} already runs (pid {already.pid}, "
                         f"{already.root}); `lab/run stop {server.name}` first")
    launch = server.launch(port, upstream)
    command = launch.command
    log(f"lab: starting {server.name} on 127.0.0.1:{port}"
        + (f" in front of {launch.upstream}" if launch.upstream else ""))
    log_path = run_folder() / f"{server.name}.log"
    with open(log_path, "wb") as output:
        process = subprocess.Popen(
            command, stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True, env={**os.environ, **server.environment},
            cwd=server.folder(),
        )
    _CHILDREN[process.pid] = process
    state = Running(server.name, process.pid, port, command, _start_time(process.pid) or "",
                    launch.upstream)
    (run_folder() / f"{server.name}.json").write_text(json.dumps(state.__dict__))
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            _CHILDREN.pop(process.pid, None)
            (run_folder() / f"{server.name}.json").unlink(missing_ok=True)
            raise SystemExit(f"lab: {server.name} exited with {process.returncode}:\n"
                             + _tail(log_path))
        if _answers(state.root + server.ready_path) and (
                not launch.upstream or _answers(launch.upstream + "/models")):
            return state
        time.sleep(0.25)
    stop(server)
    raise SystemExit(f"lab: {server.name} did not answer within {START_TIMEOUT:g} s:\n"
                     + _tail(log_path))


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except urllib.error.HTTPError:
        return True  # any HTTP answer means it is up
    except (OSError, ValueError):
        return False


def stop(server: Server) -> bool:
    """Stop the lab's process of ``server`` (SIGTERM, then SIGKILL); False if none ran."""
    state = running(server)
    if state is None:
        return False
    _signal(state.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT
    while time.monotonic() < deadline and _runs(state):
        time.sleep(0.1)
    if _runs(state):
        _signal(state.pid, signal.SIGKILL)
    _reap(state.pid)
    (run_folder() / f"{server.name}.json").unlink(missing_ok=True)
    return True


def _signal(pid: int, signum: int) -> None:
    try:
        os.killpg(pid, signum)  # the server's own session: it and its children
    except ProcessLookupError:
        pass


def _reap(pid: int) -> None:
    if (child := _CHILDREN.pop(pid, None)) is not None:
        child.wait(timeout=STOP_TIMEOUT)
        return
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"
