"""A fuzz run that could judge nothing ends as ``conformance run`` does: one line, exit 2.

Against a server answering 500 (a gateway whose upstream is down) or 503 with ``Retry-After:
3600`` to every completion request, a fuzz run was a report of findings on one cause, or a
PASS; against a server that stopped answering (a byte every 2 s, the status line never whole)
it stopped after a few requests and exited 0 with the model listing's rules PASSed. Each is
now ``run``'s one line on stderr, exit 2, nothing on stdout. The servers are raw sockets on
loopback (:func:`test_fuzz_bounded.hostile`), each answering every completion request alike.
"""

from __future__ import annotations

import io
import json
import re
import socket
import time

import pytest
from test_fuzz_bounded import Answer, hostile

from conformance.cli import main
from conformance.fuzz.answered import unjudged
from conformance.target.options import TargetOptions

QUICK = ("--seed", "1", "--phases", "examples", "--max-examples", "2")
"""A small search: the examples phase sends a few valid and invalid requests."""


def _refusing(status: int, message: str, retry_after: str = "0") -> Answer:
    body = json.dumps({"error": {"message": message, "type": "server_error", "param": None,
                                 "code": None}}).encode()

    def answer(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 %d Refused\r\nContent-Type: application/json\r\nRetry-After: "
                     b"%s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
                     % (status, retry_after.encode(), len(body)) + body)
    return answer


def _drip_everything(conn: socket.socket) -> None:
    """One byte every 2 s from the status line on: no answer ever arrives within --timeout."""
    for byte in b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}":
        conn.sendall(bytes([byte]))
        time.sleep(2)


def _fuzz(url: str, *flags: str) -> tuple[int, str, str, float]:
    out, err = io.StringIO(), io.StringIO()
    started = time.monotonic()
    status = main(["fuzz", "-q", "--base-url", url, *flags], out, err)
    return status, out.getvalue(), err.getvalue(), time.monotonic() - started


def _one_line(err: str, expected: str) -> None:
    lines = err.splitlines()
    assert len(lines) == 1, err
    pattern = ".+".join(re.escape(part) for part in expected.split("…"))
    assert re.fullmatch("conformance: error: " + pattern, lines[0]), lines[0]


@pytest.mark.parametrize(("status", "retry_after", "said", "hint"), [
    (500, "0", "upstream connect error or disconnect/reset before headers",
     "the server fails them; look at its logs (behind a gateway: is its upstream up?)"),
    (503, "3600", "Service temporarily unavailable", "wait and run again, or raise --retries"),
], ids=["500", "503-retry-after-an-hour"])
def test_a_fuzz_run_whose_completions_got_no_2xx_is_one_line(
        status: int, retry_after: str, said: str, hint: str) -> None:
    with hostile(_refusing(status, said, retry_after)) as url:
        code, out, err, _ = _fuzz(url, *QUICK)
    assert code == 2 and not out, (out, err)
    _one_line(err, f"no completion request got a 2xx: all … were answered HTTP {status} (POST "
              f'{url}/completions: "{said}"): {hint}')


def test_fuzzing_a_server_that_stopped_answering_is_runs_line_within_the_budget() -> None:
    """``fuzz --max-examples 30`` against a server dripping a byte every 2 s: three requests
    in a row get nothing within --timeout 1 s, and the run ends with ``run``'s line, well
    within its time budget."""
    with hostile(_drip_everything) as url:
        code, out, err, took = _fuzz(url, "--seed", "1", "--max-examples", "30", "--timeout",
                                     "1", "--time-budget", "60")
    assert code == 2 and not out, (out, err)
    _one_line(err, "the server stopped answering: 3 requests in a row got no whole answer "
              "within --timeout 1 s; nothing could be judged: look at its logs, or raise "
              "--timeout if it is that slow")
    assert took < 30


OPTIONS = TargetOptions()


@pytest.mark.parametrize(("tally", "stop_reason", "judged"), [
    (((200, 3, None), (500, 1, "POST u")), "completed", True),  # one 2xx: verdicts
    (((500, 4, "POST u"),), "completed", False),
    ((), "completed", True),  # no valid completion request: nothing to say
    ((), "the server stopped answering: 3 requests", True),  # --mode negative: judged as is
    (((None, 3, None),), "the server stopped answering: 3 requests", False),
    (((200, 1, None), (None, 3, None)), "the server stopped answering: 3 requests", True),
    # a status line came (its body dripped): an answer, judged by the rules of whole answers
    (((200, 3, None),), "the server stopped answering: 3 requests", True),
])
def test_only_a_run_without_any_2xx_or_status_line_is_unjudged(
        tally: tuple[tuple[int | None, int, str | None], ...], stop_reason: str,
        judged: bool) -> None:
    assert (unjudged(tally, stop_reason, OPTIONS) is None) is judged
