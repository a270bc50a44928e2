"""Recording the lab's servers into ``tests/fixtures/lab/``, and checking replays against them.

``record`` runs the catalog against each live server (one run per :class:`Recording`), keeps
the JSON report as the fixture (the exchanges the replay needs, not the parsed SSE views the
harness derives again), and rewrites the verdict table ``tests/fixtures/lab/verdicts.yaml``,
keeping each FAIL's explanation, and ``docs/compatibility.md`` through ``conformance matrix``
(:mod:`conformance.compare.matrix`) from the recordings judged by today's catalog. It prints
how the verdicts moved, so a rule change that moves one is seen and explained on purpose.
``check`` runs a server live, replays that very run through ``mockserver --replay`` and shows
that the verdicts are the same.
"""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import yaml

from conformance.compare.matrix import build_matrix
from conformance.compare.matrix_render import matrix_markdown
from conformance.compare.reports import SavedReport, load_report
from conformance.model.coverage import dangling_in_report

from . import process
from .servers import REPO, SERVERS, Recording, Server, free_port
from .sockets import listening_of_group

FIXTURES = REPO / "tests" / "fixtures" / "lab"
TABLE = FIXTURES / "verdicts.yaml"
COMPATIBILITY = REPO / "docs" / "compatibility.md"
DERIVED = ("sse_lines", "events", "observations")
"""Exchange fields the harness derives from the body again: not kept in fixtures."""
TODO = "TODO: say which real deviation of the server this is"
TABLE_HEADER = """\
# The verdict of every rule on each recorded lab server (written by `lab/run record`).
# tests/conformance/catalog/test_catalog_lab_replays.py replays each fixture through
# `mockserver --replay` and asserts these verdicts and reasons; every FAIL and NON_STRICT has a
# `why`: the server's real deviation, in one line. A rule change that moves a verdict must
# change this file on purpose: re-record, read the moves it prints, explain new FAILs.
"""
PORT = re.compile(r"(127\.0\.0\.1|localhost):\d+")


def normalize(message: str) -> str:
    """A verdict's message without the port the server happened to run on."""
    return PORT.sub(r"\1:PORT", message)


def conformance(base_url: str, recording: Recording, report: Path,
                upstream: str | None = None) -> int:
    """``conformance run`` against ``base_url`` into ``report``: live (``upstream``: the
    gateway's upstream, "" for a server that is none) or replayed (None: without the
    routing headers a replay does not need)."""
    args = recording.replay_arguments() if upstream is None else recording.arguments(upstream)
    command = [sys.executable, "-m", "conformance", "run", "-q", "--base-url", base_url,
               "--profile", recording.profile_name, *args, "--json", str(report)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    if done.returncode not in (0, 1) or not report.exists():
        raise SystemExit(f"lab: conformance run failed (exit {done.returncode}):\n"
                         + done.stderr[-2000:])
    return done.returncode


def slim(report: dict[str, Any]) -> dict[str, Any]:
    for exchange in report.get("exchanges", {}).values():
        for name in DERIVED:
            exchange.pop(name, None)
    return report


def verdicts(report: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {r["rule"]: (r["verdict"], normalize(r["message"])) for r in report["results"]}


def table_entry(
    server: Server, recording: Recording, report: dict[str, Any], old: dict[str, Any]
) -> dict[str, Any]:
    old_rules = old.get("rules", {})
    rules: dict[str, Any] = {}
    for rule, (verdict, message) in verdicts(report).items():
        if verdict == "PASS":
            rules[rule] = "PASS"
            continue
        entry: dict[str, Any] = {"verdict": verdict, "reason": message}
        if verdict in ("FAIL", "NON_STRICT"):
            entry["why"] = _kept_why(old_rules.get(rule), verdict, message)
        rules[rule] = entry
    return {
        "server": f"{server.name} {server.version}",
        "fixture": f"{recording.name}.json",
        "base_path": recording.base_path,
        "args": ["--profile", recording.profile_name, *recording.replay_arguments()],
        "rules": rules,
    }


def _kept_why(before: Any, verdict: str, reason: str) -> str:
    """The explanation of a FAIL that still fails for the same reason; a TODO (quoting the old
    one) when the reason moved, since a why explains a reason, not a rule."""
    if not isinstance(before, dict) or before.get("verdict") != verdict or not before.get("why"):
        return TODO
    if before.get("reason") == reason or before["why"].startswith(TODO):
        return str(before["why"])
    return f"{TODO} (it was {before['why']!r} when it failed with {before.get('reason')!r})"


def moves(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    def verdict_of(value: Any) -> str:
        return value if isinstance(value, str) else value.get("verdict", "?")

    before, after = old.get("rules", {}), new["rules"]
    out = []
    for rule in sorted(set(before) | set(after)):
        was = verdict_of(before[rule]) if rule in before else "-"
        now = verdict_of(after[rule]) if rule in after else "-"
        if was != now:
            out.append(f"  {rule}: {was} -> {now}")
    return out


def load_table() -> dict[str, Any]:
    if not TABLE.exists():
        return {}
    return yaml.safe_load(TABLE.read_text(encoding="utf-8")) or {}


def write_table(table: dict[str, Any]) -> None:
    text = yaml.safe_dump(dict(sorted(table.items())), sort_keys=False, allow_unicode=True,
                          width=100)
    TABLE.write_text(TABLE_HEADER + text, encoding="utf-8")


INTRO = """\
# Compatibility: real servers against the catalog

Written by `lab/run record` (and `lab/run verdicts`) through `conformance matrix`, from the
lab's recordings (`tests/fixtures/lab/`) judged by today's catalog (verdicts in
`tests/fixtures/lab/verdicts.yaml`, replayed and asserted by the default suite). Each bold
area row counts PASS/FAIL/SKIP of the area's rules, with NON_STRICT (NS) and ERROR (E) when
there are any; each rule row is its verdict per server, with the number of failing cases when
more than one, and a failing cell links to the server's deviation below. An empty cell is a
rule the server's profile does not have. Every FAIL below is a real deviation of that server,
in one line; the SKIPs' reasons are in `verdicts.yaml`; the servers and their setup are in
`lab/README.md`. `conformance matrix --replay tests/fixtures/lab/*.json` writes the same table
(with each finding's message and curl instead of these lines). The gateways (LiteLLM, Portkey)
are recorded in front of our mock, a conforming upstream, so each of their FAILs is the
gateway's own; `lab/README.md` ("Its own FAILs and those it passes through") compares Portkey
in front of vLLM with vLLM alone: which FAILs a gateway passes through, which it adds, and
which of its upstream's correct answers it hides.

"""


def compatibility(table: dict[str, Any], reports: dict[str, SavedReport]) -> str:
    """``docs/compatibility.md``: the matrix of the recordings (judged reports by name),
    each server's FAILs with their one-line why. Columns in the order of the fixtures' file
    names, as a shell lists ``tests/fixtures/lab/*.json`` for ``conformance matrix``."""
    names = sorted(table, key=lambda name: table[name]["fixture"])
    abouts, notes = [], {}
    for name in names:
        entry = table[name]
        profile_name = entry["args"][entry["args"].index("--profile") + 1]
        abouts.append(f"{entry['server']}, profile `{profile_name}`")
        notes.update({(name, rule): value["why"] for rule, value in entry["rules"].items()
                      if isinstance(value, dict) and value.get("why")})
    matrix = build_matrix([reports[name] for name in names], names=names, abouts=abouts,
                          notes=notes)
    return INTRO + matrix_markdown(matrix, title=None, curls=False)


def judged(entry: dict[str, Any], report: Path) -> SavedReport:
    """The judged report at ``report`` read as the matrix reads reports, named by the
    recording's fixture (not the temporary file it was judged into)."""
    saved = load_report(report)
    return dataclasses.replace(saved, path=f"tests/fixtures/lab/{entry['fixture']}")


def judge_fixture(name: str, entry: dict[str, Any], folder: Path) -> Path:
    """Replay the recording ``name`` (no live server) and judge it with today's catalog,
    with the arguments it was recorded with; the path of the judged report."""
    recording = SERVERS[entry["server"].split()[0]].recording(name)
    path = folder / f"{name}.json"
    with Replay(FIXTURES / entry["fixture"], timing="none") as root:
        conformance(root + recording.base_path, recording, path)
    return path


def write_compatibility(table: dict[str, Any], reports: dict[str, SavedReport],
                        log: Callable[[str], None] = print) -> None:
    """Write ``docs/compatibility.md``; recordings without a judged report in ``reports``
    (those not recorded this time) are replayed and judged first."""
    missing = sorted(set(table) - set(reports))
    if missing:
        log(f"lab: judging the other recordings for the table: {', '.join(missing)}")
    with tempfile.TemporaryDirectory() as folder:
        for name in missing:
            path = judge_fixture(name, table[name], Path(folder))
            reports[name] = judged(table[name], path)
    COMPATIBILITY.write_text(compatibility(table, reports), encoding="utf-8")


def record(servers: Iterable[Server], log: Callable[[str], None] = print,
           upstream: Server | None = None) -> None:
    """Record each server into the fixtures; a gateway in front of ``upstream`` (a lab
    server, started for it when it does not run) when given, its recordings then named
    ``GATEWAY-via-UPSTREAM-PROFILE``."""
    FIXTURES.mkdir(parents=True, exist_ok=True)
    table = load_table()
    reports: dict[str, SavedReport] = {}
    for server in servers:
        with Started(server, upstream, log) as state:
            for recording in recordings_of(server, upstream):
                path = FIXTURES / f"{recording.name}.json"
                conformance(state.root + recording.base_path, recording, path, state.upstream)
                report = slim(json.loads(path.read_text(encoding="utf-8")))
                path.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n",
                                encoding="utf-8")
                entry = table_entry(server, recording, report,
                                    table.get(recording.name, {}))
                reports[recording.name] = judged(entry, path)
                dangling(report, recording.name, log)
                moved = moves(table.get(recording.name, {}), entry)
                table[recording.name] = entry
                summary = report["summary"]
                log(f"lab: {recording.name}: " + ", ".join(
                    f"{summary[v]} {v}" for v in ("PASS", "FAIL", "NON_STRICT", "SKIP", "ERROR")))
                log("\n".join(moved) if moved else "  no verdict moved")
    write_table(table)
    write_compatibility(table, reports, log)
    _warn_todo(table, log)


def _warn_todo(table: dict[str, Any], log: Callable[[str], None]) -> None:
    todo = [f"{name} {rule}" for name, entry in table.items()
            for rule, value in entry["rules"].items()
            if isinstance(value, dict) and value.get("why") == TODO]
    if todo:
        log(f"lab: explain these FAILs in {TABLE.relative_to(REPO)}: " + ", ".join(todo))


def retable(log: Callable[[str], None] = print) -> None:
    """Re-judge the recorded fixtures (replayed, no live server) and rewrite the verdict table
    and docs/compatibility.md, keeping every FAIL's explanation: for a rule change that moves
    verdicts on the recordings."""
    table = load_table()
    reports: dict[str, SavedReport] = {}
    for name, entry in sorted(table.items()):
        server = SERVERS[entry["server"].split()[0]]
        recording = server.recording(name)
        with tempfile.TemporaryDirectory() as folder:
            path = judge_fixture(name, entry, Path(folder))
            report = json.loads(path.read_text(encoding="utf-8"))
            reports[name] = judged(entry, path)
        new = table_entry(server, recording, report, entry)
        moved = moves(entry, new)
        table[name] = new
        log(f"lab: {name}: " + ("no verdict moved" if not moved else "\n" + "\n".join(moved)))
    write_table(table)
    write_compatibility(table, reports, log)
    _warn_todo(table, log)


def check(servers: Iterable[Server], log: Callable[[str], None] = print,
          upstream: Server | None = None) -> bool:
    """Run each server live (a gateway in front of ``upstream`` when given), replay that run,
    and compare every verdict; True when all hold and no SKIP of the live run points at a
    rule that did not fail (:func:`dangling`: a live server may answer otherwise than its
    recording, as Prism does when the spec changes)."""
    same = True
    for server in servers:
        with Started(server, upstream, log) as state:
            same = on_loopback_only(server, state, log) and same
            for recording in recordings_of(server, upstream):
                with tempfile.TemporaryDirectory() as folder:
                    live_path, replay_path = Path(folder, "live.json"), Path(folder, "r.json")
                    conformance(state.root + recording.base_path, recording, live_path,
                                state.upstream)
                    report = json.loads(live_path.read_text(encoding="utf-8"))
                    live = verdicts(report)
                    with Replay(live_path) as root:
                        conformance(root + recording.base_path, recording, replay_path)
                    replayed = verdicts(json.loads(replay_path.read_text(encoding="utf-8")))
                differing = sorted(r for r in live if live[r] != replayed.get(r))
                pointers = dangling(report, recording.name, log)
                same = same and not differing and not pointers
                log(f"lab: {recording.name}: live and replayed verdicts "
                    + ("agree" if not differing else f"differ on {', '.join(differing)}"))
    return same


def on_loopback_only(server: Server, state: process.Running,
                     log: Callable[[str], None] = print) -> bool:
    """Whether the running ``server`` listens on loopback only, by the kernel's socket table
    (every process of its group: a gateway's mock beside it, vLLM's engine), logged."""
    sockets = listening_of_group(state.pid)
    where = ", ".join(sorted({f"{each.address}:{each.port}" for each in sockets}))
    exposed = [each for each in sockets if not each.loopback]
    log(f"lab: {server.name} listens on {where or 'nothing'}"
        + (" (beyond loopback!)" if exposed else " (loopback only)"))
    return not exposed and bool(sockets)


def recordings_of(server: Server, upstream: Server | None) -> tuple[Recording, ...]:
    """The server's recordings; a gateway's as made in front of ``upstream``, if given."""
    if upstream is None:
        return server.recordings
    return tuple(recording.via(upstream.name) for recording in server.recordings)


def upstream_url(upstream: Server, state: process.Running) -> str:
    """The base URL of a running lab server, as a gateway in front of it forwards to it."""
    return state.root + upstream.recordings[0].base_path


class Started:
    """``server`` started on a free port for the ``with`` block, and stopped after it; a
    gateway in front of the lab server ``upstream`` (started for the block when it did not
    run, left running when it did), else of its default upstream."""

    def __init__(self, server: Server, upstream: Server | None,
                 log: Callable[[str], None] = print) -> None:
        self.server, self.upstream, self.log = server, upstream, log
        self.started_upstream = False

    def __enter__(self) -> process.Running:
        url: str | None = None
        if self.upstream is not None:
            state = process.running(self.upstream)
            if state is None:
                state = process.start(self.upstream, free_port(), self.log)
                self.started_upstream = True
            url = upstream_url(self.upstream, state)
        try:
            return process.start(self.server, free_port(), self.log, url)
        except BaseException:
            self._stop_upstream()
            raise

    def __exit__(self, *exc: object) -> None:
        process.stop(self.server)
        self._stop_upstream()

    def _stop_upstream(self) -> None:
        if self.upstream is not None and self.started_upstream:
            process.stop(self.upstream)


def dangling(report: dict[str, Any], name: str, log: Callable[[str], None] = print
             ) -> dict[str, str]:
    """The SKIPs of a run's report whose reason points at rules none of which failed in it
    (:func:`~conformance.model.coverage.dangling_in_report`), each logged: a reader who follows
    such a pointer finds nothing wrong."""
    found = dangling_in_report((r["rule"], r["area"], r["verdict"], r["message"])
                               for r in report["results"])
    for rule, reason in sorted(found.items()):
        log(f"lab: {name}: {rule} SKIPs pointing at no failure: {reason}")
    return found


class Replay:
    """``mockserver --replay REPORT`` as a child process; yields its root URL."""

    def __init__(self, report: Path, timing: str = "recorded") -> None:
        self.report = report
        self.timing = timing
        self.process: subprocess.Popen[str] | None = None

    def __enter__(self) -> str:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mockserver", "--replay", str(self.report), "--port", "0",
             "--replay-timing", self.timing],
            stdout=subprocess.PIPE, text=True, cwd=REPO,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        match = re.search(r"serving (http://\S+?)/v1", line)
        if not match:
            self.__exit__()
            raise SystemExit(f"lab: the replay did not start: {line!r}")
        return match[1]

    def __exit__(self, *exc: object) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=30)
            if self.process.stdout is not None:
                self.process.stdout.close()  # else a ResourceWarning, an error under pytest
