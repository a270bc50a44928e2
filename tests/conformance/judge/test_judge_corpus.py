"""The real API's own traffic: ``conformance judge`` over the public recordings in
``tests/fixtures/openai-recordings/`` (sources in its SOURCES.md) finds no violation under
``openai`` and ``openai-compatible``, and one named deviation written into a real exchange is
flagged by exactly the rule that owns it.

The one SHOULD the corpus breaks is kept on purpose: in December 2021 the API sent no ``usage``
(USAGE-010, NON_STRICT); it has sent it on every answer since September 2022, so a server that
leaves it out today should still be told.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from conformance.cli import main

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "openai-recordings"
USAGE_STREAM = CORPUS / "DataDog__dd-trace-js__instruct-stream-include-usage-2025-06.yaml"
"""A streamed answer with ``stream_options.include_usage`` (2025-06): the tokens, a ``stop``
finish chunk, the usage chunk, ``[DONE]``."""
DOUBLE_FINISH = CORPUS / "traceloop__openllmetry-js__instruct-stream-length-double-2025-08-11.har"
"""A stream ended by ``length`` whose finish chunk is repeated with empty text (2025-08-11)."""


def verdicts(report: dict[str, Any], *wanted: str) -> dict[str, list[str]]:
    """The rules of each verdict in ``wanted``, with the exchanges their findings name."""
    return {result["rule"]: [finding["exchange"] for finding in result["findings"]]
            for result in report["results"] if result["verdict"] in wanted}


@pytest.mark.parametrize("profile_name", ["openai", "openai-compatible"])
def test_the_real_api_s_recordings_give_no_violation(profile_name: str, tmp_path: Path) -> None:
    report_file = tmp_path / "corpus.json"
    with io.StringIO() as out, io.StringIO() as err:
        code = main(["judge", "-q", str(CORPUS), "--profile", profile_name,
                     "--json", str(report_file)], out, err)
        text = out.getvalue()
    report = json.loads(report_file.read_text())
    assert code == 0, text
    assert verdicts(report, "FAIL", "ERROR") == {}
    shoulds = verdicts(report, "NON_STRICT")
    assert set(shoulds) == {"USAGE-010"}, shoulds
    assert all("2021-12" in exchange for exchange in shoulds["USAGE-010"]), shoulds
    judged_rules = verdicts(report, "PASS")
    for rule in ("FINISH-002", "SCHEMA-001", "SSE-005", "USAGE-001", "USAGE-005", "IDENTITY-004"):
        assert rule in judged_rules, rule  # judged on the real streams, not SKIPped


def _events(body: str) -> list[str]:
    return [event for event in body.split("\n\n") if event.strip()]


def _sse(events: list[str]) -> str:
    return "".join(f"{event}\n\n" for event in events)


def _usage_before_finish(events: list[str]) -> list[str]:
    return [*events[:-3], events[-2], events[-3], events[-1]]


def _without_done(events: list[str]) -> list[str]:
    return events[:-1]


def _text_after_finish(events: list[str]) -> list[str]:
    token = json.loads(events[-4].removeprefix("data: "))
    token["choices"][0]["text"] = " more"
    return [*events[:-2], "data: " + json.dumps(token), *events[-2:]]


BENT_STREAMS: dict[str, tuple[Callable[[list[str]], list[str]], str]] = {
    "usage before finish": (_usage_before_finish, "USAGE-005"),
    "no [DONE]": (_without_done, "SSE-005"),
    "text after the finish": (_text_after_finish, "FINISH-004"),
}


def _cassette_with(tmp_path: Path, bend: Callable[[dict[str, Any]], None]) -> Path:
    cassette = yaml.safe_load(USAGE_STREAM.read_text(encoding="utf-8"))
    bend(cassette["interactions"][0])
    path = tmp_path / "bent.yaml"
    path.write_text(yaml.safe_dump(cassette), encoding="utf-8")
    return path


def _flagged(path: Path) -> set[str]:
    report_file = path.with_suffix(".report.json")
    with io.StringIO() as out, io.StringIO() as err:
        code = main(["judge", "-q", str(path), "--json", str(report_file)], out, err)
    report = json.loads(report_file.read_text())
    assert code == 1, report["results"]
    return set(verdicts(report, "FAIL", "NON_STRICT", "ERROR"))


def test_the_real_stream_untouched_passes(tmp_path: Path) -> None:
    path = _cassette_with(tmp_path, lambda interaction: None)
    with io.StringIO() as out, io.StringIO() as err:
        assert main(["judge", "-q", str(path)], out, err) == 0, out.getvalue()


@pytest.mark.parametrize("deviation", sorted(BENT_STREAMS))
def test_a_deviation_written_into_a_real_stream_is_flagged_by_exactly_its_rule(
        tmp_path: Path, deviation: str) -> None:
    bend_events, rule = BENT_STREAMS[deviation]

    def bend(interaction: dict[str, Any]) -> None:
        body = interaction["response"]["body"]
        body["string"] = _sse(bend_events(_events(body["string"])))

    assert _flagged(_cassette_with(tmp_path, bend)) == {rule}


def test_a_stop_string_left_in_a_real_stream_is_flagged_by_the_stop_rule(tmp_path: Path
                                                                         ) -> None:
    """The request asks to stop at a word the recorded answer then wrote."""
    def bend(interaction: dict[str, Any]) -> None:
        request = json.loads(interaction["request"]["body"])
        interaction["request"]["body"] = json.dumps({**request, "stop": ["Hello"]})

    assert _flagged(_cassette_with(tmp_path, bend)) == {"STOP-001"}


def test_a_finish_reason_changed_on_the_repeat_is_flagged_by_the_finish_rule(tmp_path: Path
                                                                             ) -> None:
    """OpenAI repeats its ``length`` finish on an empty chunk (valid); a repeat that says
    something else is not."""
    har = json.loads(DOUBLE_FINISH.read_text(encoding="utf-8"))
    content = har["log"]["entries"][0]["response"]["content"]
    events = _events(content["text"])
    finishes = [i for i, event in enumerate(events) if '"finish_reason":"length"' in event]
    assert len(finishes) == 2, finishes
    events[finishes[1]] = events[finishes[1]].replace('"finish_reason":"length"',
                                                      '"finish_reason":"stop"')
    content["text"] = _sse(events)
    content["size"] = len(content["text"].encode())  # else read as a body the recorder cut
    path = tmp_path / "bent.har"
    path.write_text(json.dumps(har), encoding="utf-8")
    assert _flagged(path) == {"FINISH-002"}
