"""The verdict table of the lab's recordings (no server): an explanation outlives a
re-recording only while the rule fails for the same reason, and no SKIP hides a deviation."""

from __future__ import annotations

import re

import yaml

from conformance.model.coverage import BROKEN, NOT_CLAIMED, skip_group
from lab.record import TABLE, TODO, dangling, table_entry
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


PRECONDITION_SKIPS = {
    ("prism-openai", "INDICES-003"): "Prism answers every prompt with the spec's example text",
    ("prism-friendli", "INDICES-003"): "Prism answers every prompt with the spec's example text",
    ("prism-friendli", "FRIENDLI-014"): "the spec's example, Prism's answer to every request, "
    "repeats none of its token ids: no repeat to penalize",
    **{(server, rule): "the lab's tiny model answers every prompt with one 12-token sentence and "
       "end-of-text, repeating none of its tokens: no repeat to penalize"
       for server in ("llama-cpp-python-openai", "llama-cpp-python-openai-compatible",
                      "vllm-openai", "vllm-openai-compatible", "vllm-vllm")
       for rule in ("SAMPLING-001", "SAMPLING-002")},
}
"""SKIPs on a recording that no failing rule explains, each with the server's reason."""


def _table() -> dict:
    return yaml.safe_load(TABLE.read_text(encoding="utf-8"))


def test_every_skip_on_a_real_server_points_at_a_reported_failure() -> None:
    """A SKIP is a hole in a verdict: on the recorded servers each one (but a feature not
    claimed) names the rule that judges what broke it, and that rule FAILed there, so the
    report says what to fix to close it."""
    holes = []
    for name, entry in _table().items():
        rules = entry["rules"]
        failing = frozenset(
            key for rule, value in rules.items()
            if (value if isinstance(value, str) else value["verdict"]) in ("FAIL", "NON_STRICT")
            for key in (rule, rule.rsplit("-", 1)[0])
        )
        for rule, value in rules.items():
            if isinstance(value, str) or value["verdict"] != "SKIP":
                continue
            if skip_group(value["reason"], failing) not in (NOT_CLAIMED, BROKEN) and (
                    name, rule) not in PRECONDITION_SKIPS:
                holes.append(f"{name} {rule}: {value['reason']}")
    assert not holes, "\n".join(holes)


def test_a_live_run_whose_skip_points_at_a_pass_is_reported() -> None:
    """``lab/run check`` and ``record`` check the live run's pointers too: Prism, mocking a
    spec that changed since its recording, once SKIPped FINISH-005 "is max_tokens honoured?
    PARAMS-007" while PARAMS-007 passed."""
    report = {"results": [
        {"rule": "PARAMS-007", "area": "PARAMS", "verdict": "PASS", "message": ""},
        {"rule": "FINISH-005", "area": "FINISH", "verdict": "SKIP",
         "message": "the 3-token run is not a proper prefix of the 16-token greedy run (is "
                    "max_tokens honoured? PARAMS-007)"},
        {"rule": "PARAMS-002", "area": "PARAMS", "verdict": "SKIP",
         "message": "logit-bias/ban was not sent: no ids were decoded (ECHO-005)"},
        {"rule": "ECHO-005", "area": "ECHO", "verdict": "FAIL", "message": "no text"},
    ]}
    lines: list[str] = []
    assert set(dangling(report, "prism-openai", lines.append)) == {"FINISH-005"}
    assert lines == ["lab: prism-openai: FINISH-005 SKIPs pointing at no failure: the 3-token "
                     "run is not a proper prefix of the 16-token greedy run (is max_tokens "
                     "honoured? PARAMS-007)"]


def test_a_valid_request_a_server_failed_is_one_finding_on_every_recording() -> None:
    """One cause, one finding: a valid request a lab server answered with a 5xx (llama-cpp-
    python's prompt lists and token-id prompts) is ERRORS-008's FAIL alone; no other rule
    fails or is NON_STRICT for it (they SKIP naming ERRORS-008)."""
    repeated = [
        f"{name} {rule}: {value['reason']}"
        for name, entry in _table().items() for rule, value in entry["rules"].items()
        if rule != "ERRORS-008" and isinstance(value, dict)
        and value["verdict"] in ("FAIL", "NON_STRICT")
        and re.search(r"refused with HTTP 5\d\d|not accepted", value["reason"])
        and "HTTP 5" in str(value.get("why", ""))
    ]
    assert not repeated, "\n".join(repeated)
