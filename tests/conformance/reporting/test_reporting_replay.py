"""A report is a faithful recording: replayed by ``mockserver --replay``, it gets the same verdicts.

Each case runs the catalog against the embedded mock (clean, or with faults that real servers
have) and writes the JSON report; a second mock child process replays that report, and the
catalog run against the replay must give every rule the same verdict and message.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

import spec
from conformance.cli import main
from conformance.target.embedded import EmbeddedMock


def run_json(report: Path, *argv: str) -> dict:
    out, err = io.StringIO(), io.StringIO()
    status = main(["run", "-q", "--json", str(report), *argv], out, err)
    assert status in (0, 1), err.getvalue()
    return json.loads(report.read_text(encoding="utf-8"))


def verdicts(report: dict) -> dict[str, tuple[str, str]]:
    return {r["rule"]: (r["verdict"], r["message"]) for r in report["results"]}


CASES = {
    "openai-clean": ("openai", ()),
    "openai-faulty": ("openai", ("usage-before-finish", "done-missing", "stop-leak-stream")),
    "friendli-clean": ("friendli", ()),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_replayed_report_gets_the_verdicts_of_the_live_run(
    case: str, mock: EmbeddedMock, tmp_path: Path
) -> None:
    profile_name, faults = CASES[case]
    profile = spec.get_profile(profile_name)
    target = ["--base-url", mock.url_for(profile), "--profile", profile_name]
    if profile_name == "friendli":
        target += ["--model", "reference-ngram"]
    if faults:
        target += ["--header", f"X-Mock-Fault: {','.join(faults)}"]
    live = run_json(tmp_path / "live.json", *target)
    if not faults:
        assert live["passed"], [r["rule"] for r in live["results"] if r["verdict"] != "PASS"]
    else:
        assert not live["passed"]
    with EmbeddedMock(["--replay", str(tmp_path / "live.json"), "--replay-timing", "none"]) as rp:
        replay_target = ["--base-url", rp.url_for(profile), "--profile", profile_name]
        if profile_name == "friendli":
            replay_target += ["--model", "reference-ngram"]
        replayed = run_json(tmp_path / "replayed.json", *replay_target)
    assert verdicts(replayed) == verdicts(live)


def test_a_report_keeps_bodies_exactly_and_the_model_discovery(
    mock: EmbeddedMock, tmp_path: Path
) -> None:
    report = run_json(tmp_path / "r.json", "--base-url", mock.openai_url, "--select", "SSE-*")
    exchanges = report["exchanges"]
    assert exchanges["discovery/models"]["request"]["method"] == "GET"
    stream = next(e for e in exchanges.values() if e.get("sse_lines"))
    assert stream["body"].encode() == "".join(
        line + "\n" for line in stream["sse_lines"]).encode()
    assert sum(size for size, _ in stream["chunks"]) == stream["bytes_received"]
    assert all(at >= 0 for _, at in stream["chunks"])


def test_two_runs_send_the_same_requests_byte_for_byte(
    mock: EmbeddedMock, tmp_path: Path
) -> None:
    """A replay can only answer what was recorded: the probes must send the same bytes (method,
    path, body) for the same settings on every run."""

    def sent(report: dict) -> list[tuple[str, str, str]]:
        return sorted(
            (e["request"]["method"], e["request"]["url"], e["request"].get("body", ""))
            for e in report["exchanges"].values()
        )

    first = run_json(tmp_path / "a.json", "--base-url", mock.openai_url)
    second = run_json(tmp_path / "b.json", "--base-url", mock.openai_url)
    assert sent(first) == sent(second)
    assert len(sent(first)) > 50
