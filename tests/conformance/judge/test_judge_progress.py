"""Progress of a long judging: a line every ten seconds in a log, a status line redrawn in
place on a terminal, nothing with -q."""

from __future__ import annotations

import io

from conformance.judge.progress import EVERY, Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_log_gets_a_line_every_ten_seconds() -> None:
    now = [0.0]
    err = io.StringIO()
    progress = Progress(err, clock=lambda: now[0])
    for read in range(1, 2001):
        now[0] = read * 0.01  # 20 s in all
        progress.tick("day.har", read, read // 2)
    progress.end()
    lines = err.getvalue().splitlines()
    assert len(lines) == int(20 / EVERY)
    assert lines[0] == ("conformance judge: day.har: 1,000 exchanges read, 500 completions "
                        "judged")


def test_a_terminal_gets_one_line_redrawn_and_cleared() -> None:
    now = [0.0]
    err = Terminal()
    progress = Progress(err, clock=lambda: now[0])
    for read in range(1, 11):
        now[0] = read * 1.0
        progress.tick("day.har", read, read)
    progress.end()
    text = err.getvalue()
    assert "\n" not in text
    assert text.count("\r") == 11 and text.endswith("\r\x1b[K")


def test_quiet_says_nothing() -> None:
    err = Terminal()
    progress = Progress(err, quiet=True, clock=lambda: 100.0)
    progress.tick("day.har", 1, 1)
    progress.end()
    assert err.getvalue() == ""
