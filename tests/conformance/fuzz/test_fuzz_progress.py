"""Progress of ``conformance fuzz``: a status line redrawn in place on a terminal, one line per
phase in a log, nothing with ``-q``."""

from __future__ import annotations

import io
import json
import os
import pty
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fuzz_support import run_cli
from schemathesis.engine import events
from schemathesis.engine.run import Phase, PhaseName

from conformance.fuzz.campaign import _on_event
from conformance.fuzz.config import FuzzResult
from conformance.fuzz.findings import FindingCollector
from conformance.fuzz.progress import (
    CLEAR_TO_EOL,
    Live,
    PhaseLines,
    Quiet,
    Status,
    StatusLine,
    Tally,
    phase_text,
    reporter,
    status_text,
)
from conformance.target.embedded import EmbeddedMock

REPO = Path(__file__).resolve().parents[3]


class FakeTerminal(io.StringIO):
    """What the renderers see of a terminal: a stream that says it is one."""

    def isatty(self) -> bool:
        return True


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_status_says_requests_examples_time_of_budget_findings_and_phase() -> None:
    status = Status(phase="fuzzing", requests=812, examples=700, findings=1, elapsed=37.4,
                    budget=60)
    assert status_text(status) == (
        "fuzzing phase | 812 requests | 700 examples | 37 s of 60 s | 1 finding")
    assert "| 5 s |" in status_text(Status("coverage", 1, 1, 0, elapsed=5.2))


def test_a_phase_line_counts_what_the_phase_did() -> None:
    start = Status("fuzzing", requests=100, examples=90, findings=1, elapsed=2.0, budget=10)
    end = Status("fuzzing", requests=350, examples=330, findings=3, elapsed=9.5, budget=10)
    assert phase_text(start, end) == ("fuzzing phase: 250 requests, 240 examples, "
                                      "2 new findings in 7.5 s (10 s of 10 s)")


def test_the_stream_chooses_the_renderer() -> None:
    assert isinstance(reporter(FakeTerminal(), quiet=False), StatusLine)
    assert isinstance(reporter(io.StringIO(), quiet=False), PhaseLines)
    assert isinstance(reporter(FakeTerminal(), quiet=True), Quiet)


def test_the_status_line_is_redrawn_in_place_and_ends_with_a_newline() -> None:
    terminal, clock, sent = FakeTerminal(), Clock(), [0]
    line = StatusLine(terminal, tick=60)  # no tick in this test: every draw is asked for
    tally = Tally(requests=lambda: sent[0], budget=60, clock=clock)
    line.begin(tally)
    tally.phase = "examples"
    line.phase("examples")
    sent[0], tally.examples, clock.now = 12, 10, 103.0
    line.redraw()
    line.redraw()  # nothing changed: nothing drawn
    line.message("shrinking a finding")
    line.end()
    text = terminal.getvalue()
    assert text.endswith("\n") and text.count("\n") == 2
    draws = text.split("\r")[1:]
    assert draws == [
        f"starting phase | 0 requests | 0 examples | 0 s of 60 s | 0 findings{CLEAR_TO_EOL}",
        f"examples phase | 0 requests | 0 examples | 0 s of 60 s | 0 findings{CLEAR_TO_EOL}",
        f"examples phase | 12 requests | 10 examples | 3 s of 60 s | 0 findings{CLEAR_TO_EOL}",
        # a message clears the line, prints above it and draws the status again
        f"{CLEAR_TO_EOL}conformance fuzz: shrinking a finding\n",
        f"examples phase | 12 requests | 10 examples | 3 s of 60 s | 0 findings{CLEAR_TO_EOL}\n",
    ]


def test_the_ticker_redraws_at_most_ten_times_a_second() -> None:
    terminal, sent = FakeTerminal(), [0]

    def requests() -> int:  # a count that changes at every look: every tick would draw
        sent[0] += 1
        return sent[0]

    line = StatusLine(terminal)
    line.begin(Tally(requests=requests))
    time.sleep(0.55)
    line.end()
    draws = terminal.getvalue().count("\r")
    assert 3 <= draws <= 8  # the first draw, about five ticks, the last one


def test_a_log_gets_one_line_per_phase_with_its_counts() -> None:
    log, clock, sent = io.StringIO(), Clock(), [0]
    lines = PhaseLines(log)
    tally = Tally(requests=lambda: sent[0], clock=clock)
    lines.begin(tally)
    lines.message("seed 1: replay this run with --seed 1")
    for phase, requests in (("examples", 6), ("fuzzing", 250)):
        tally.phase = phase
        lines.phase(phase)
        sent[0] += requests
        tally.examples += requests
        clock.now += 1.0
    lines.end()
    assert log.getvalue().splitlines() == [
        "conformance fuzz: seed 1: replay this run with --seed 1",
        "conformance fuzz: examples phase: 6 requests, 6 examples, 0 new findings in 1.0 s (1 s)",
        "conformance fuzz: fuzzing phase: 250 requests, 250 examples, 0 new findings in 1.0 s "
        "(2 s)",
    ]


class Recorder:
    """A reporter that keeps what it was told."""

    def __init__(self) -> None:
        self.told: list[str] = []

    def begin(self, tally: Tally) -> None:
        self.told.append("begin")

    def phase(self, name: str) -> None:
        self.told.append(name)

    def message(self, text: str) -> None:
        self.told.append(text)

    def end(self) -> None:
        self.told.append("end")


def test_the_engine_tells_a_restarted_phase_once() -> None:
    recorder = Recorder()
    live = Live(recorder, Tally(requests=lambda: 0))
    result = FuzzResult(seed=1, profile_name="openai", base_url="http://127.0.0.1:9/v1", checks=())
    collector = FindingCollector()
    names = [PhaseName(name) for name in ("probing", "coverage", *["fuzzing"] * 100)]
    for name in names:
        _on_event(events.PhaseStarted(phase=Phase(name=name), payload=None), result, collector,
                  live)
    assert recorder.told == ["coverage", "fuzzing"]
    assert live.tally.phase == "fuzzing"


def test_a_long_run_logs_each_phase_once_with_counts_across_workers(
        mock: EmbeddedMock, tmp_path: Path) -> None:
    report = tmp_path / "fuzz.json"
    status, _, err = run_cli(["fuzz", "--base-url", mock.openai_url, "--time-budget", "6",
                              "--max-examples", "5", "--seed", "2", "--workers", "2",
                              "--phases", "fuzzing", "--json", str(report)])
    assert status == 0, err
    lines = err.splitlines()
    assert len(lines) == len(set(lines)) == 2, err  # schemathesis restarts fuzzing: one line
    assert lines[0] == "conformance fuzz: seed 2: replay this run with --seed 2"
    assert lines[1].startswith("conformance fuzz: fuzzing phase: ")
    requests = int(lines[1].split(" phase: ")[1].split(" request")[0])
    examples = int(lines[1].split(" requests, ")[1].split(" example")[0])
    stats = json.loads(report.read_text())
    # both workers' requests, and the run's first greedy request before any phase
    # (conformance/fuzz/produced.py)
    assert requests + 1 == stats["stats"]["requests"] > 1
    assert examples == stats["search"]["examples"]


def test_quiet_prints_no_progress(mock: EmbeddedMock) -> None:
    status, _, err = run_cli(["fuzz", "--base-url", mock.openai_url, "--max-examples", "3",
                              "--seed", "1", "--phases", "fuzzing", "-q"])
    assert status == 0 and err == ""


def _fuzz_command(url: str, *flags: str) -> list[str]:
    return [sys.executable, "-m", "conformance", "fuzz", "--base-url", url, "--seed", "1",
            "--max-examples", "5", "--phases", "fuzzing", *flags]


def _environment(cache: Path) -> dict[str, str]:
    return {**os.environ, "XDG_CACHE_HOME": str(cache), "PYTHONPATH": str(REPO)}


def test_a_terminal_gets_one_status_line_redrawn_in_place(mock: EmbeddedMock, tmp_path: Path,
                                                          user_cache: Path) -> None:
    master, slave = pty.openpty()
    with subprocess.Popen(_fuzz_command(mock.openai_url, "--time-budget", "2"),
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave,
                          cwd=tmp_path, env=_environment(user_cache)
                          ) as child:
        os.close(slave)
        seen = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the child closed its end (Linux says EIO)
                break
            if not chunk:
                break
            seen += chunk
        child.wait(timeout=60)
    os.close(master)
    assert child.returncode == 0
    text = seen.decode().replace("\r\n", "\n")  # the terminal turns "\n" into "\r\n"
    assert text.endswith("\n")
    status_lines = text.split("\n")[-2].split("\r")[1:]
    assert len(status_lines) > 3 and all(CLEAR_TO_EOL in line for line in status_lines)
    assert status_lines[-1].startswith("fuzzing phase | ")
    assert " of 2 s | 0 findings" in status_lines[-1]
    assert text.count("seed 1: replay this run") == 1


def test_a_run_leaves_the_directory_it_started_in_empty(mock: EmbeddedMock, tmp_path: Path
                                                        ) -> None:
    workdir, cache = tmp_path / "work", tmp_path / "cache"  # a cold cache: hypothesis writes
    workdir.mkdir()
    done = subprocess.run(_fuzz_command(mock.openai_url, "-q", "--keep-examples", "--header",
                                        "X-Mock-Fault: usage-total-wrong"),
                          capture_output=True, text=True, cwd=workdir, env=_environment(cache),
                          timeout=120)
    assert done.returncode == 1, done.stderr  # a finding, shrunk: its examples are saved
    assert list(workdir.iterdir()) == []
    home = cache / "completions-conformance" / "hypothesis"
    assert any(path.is_file() for path in (home / "examples").rglob("*"))
    assert {path.name for path in home.iterdir()} > {"examples"}  # hypothesis' own files too


def test_the_example_db_goes_where_it_is_told(mock: EmbeddedMock, tmp_path: Path,
                                              user_cache: Path) -> None:
    database = tmp_path / "db"
    status, _, err = run_cli(["fuzz", "--base-url", mock.openai_url, "--max-examples", "5",
                              "--seed", "1", "--phases", "fuzzing", "--no-shrink", "-q",
                              "--header", "X-Mock-Fault: usage-total-wrong",
                              "--example-db", str(database)])
    assert status == 1, err
    assert any(path.is_file() for path in database.rglob("*"))  # the failing examples
    assert not (user_cache / "completions-conformance" / "hypothesis" / "examples").exists()


@pytest.mark.parametrize(("flags", "kept"), [((), False), (("--keep-examples",), True)])
def test_the_example_db_is_kept_in_the_user_cache_when_asked(mock: EmbeddedMock, user_cache: Path,
                                                   flags: tuple[str, ...], kept: bool) -> None:
    status, _, err = run_cli(["fuzz", "--base-url", mock.openai_url, "--max-examples", "5",
                              "--seed", "1", "--phases", "fuzzing", "--no-shrink", "-q",
                              "--header", "X-Mock-Fault: usage-total-wrong", *flags])
    assert status == 1, err
    examples = user_cache / "completions-conformance" / "hypothesis" / "examples"
    assert any(path.is_file() for path in examples.rglob("*")) is kept


def test_an_example_db_that_is_a_file_is_a_usage_error(tmp_path: Path) -> None:
    taken = tmp_path / "file"
    taken.write_text("")
    status, _, err = run_cli(["fuzz", "--example-db", str(taken)])
    assert status == 2 and "--example-db must be a directory" in err


def test_a_check_that_judged_nothing_skips_with_why_instead_of_passing() -> None:
    from fuzz_support import settings

    from conformance.fuzz.results import run_result
    from conformance.model import Verdict

    result = FuzzResult(seed=1, profile_name="openai", base_url="http://127.0.0.1:9/v1",
                        checks=("not_a_server_error", "USAGE-001", "SCHEMA-001"), examples=4,
                        requests=4, judged={"SCHEMA-001": 4})
    verdicts = {item.rule.id: item for item in run_result(result, settings("openai")).results}
    assert verdicts["SCHEMA-001"].verdict is Verdict.PASS
    assert verdicts["FUZZ-001"].verdict is Verdict.PASS
    assert verdicts["USAGE-001"].verdict is Verdict.SKIP
    assert "none of the 4 examples gave it an answer to judge" in verdicts["USAGE-001"].message
    nothing = FuzzResult(seed=1, profile_name="openai", base_url="http://127.0.0.1:9/v1",
                         checks=("not_a_server_error",), requests=3)
    skipped = run_result(nothing, settings("openai")).results[0]
    assert skipped.verdict is Verdict.SKIP and "no example was judged" in skipped.message
