"""The verdict table's bookkeeping (no server): an explanation outlives a re-recording only
while the rule fails for the same reason."""

from __future__ import annotations

from lab.record import TODO, table_entry
from lab.servers import SERVERS

SERVER = SERVERS["litellm"]
RECORDING = SERVER.recordings[0]


def _report(verdict: str, message: str) -> dict:
    return {"results": [{"rule": "ERRORS-001", "verdict": verdict, "message": message}]}


def _why(old_reason: str, new_reason: str) -> str:
    old = {"rules": {"ERRORS-001": {"verdict": "FAIL", "reason": old_reason,
                                    "why": "Out-of-range values are answered 200."}}}
    entry = table_entry(SERVER, RECORDING, _report("FAIL", new_reason), old)
    return str(entry["rules"]["ERRORS-001"]["why"])


def test_a_why_is_kept_while_the_reason_holds() -> None:
    assert _why("temperature 3 got HTTP 200", "temperature 3 got HTTP 200") == (
        "Out-of-range values are answered 200.")


def test_a_moved_reason_asks_for_a_new_why_quoting_the_old_one() -> None:
    why = _why("temperature 3 got HTTP 200", "five stop strings got HTTP 200")
    assert why.startswith(TODO) and "Out-of-range values" in why
