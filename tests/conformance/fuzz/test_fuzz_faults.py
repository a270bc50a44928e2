"""``conformance fuzz`` finds the mock's faults and shrinks each to a short reproduction.

Each fault breaks one requirement in one named way (``X-Mock-Fault: NAME``); the fuzzer, which
knows nothing of the fault, must report the rule (or schemathesis check, FUZZ-NNN) that names
it, with a curl command small enough to read. The full sweep over every fault is a slow test.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from fuzz_support import findings, found_rules, run_cli

from conformance.target.embedded import EmbeddedMock

REPRESENTATIVE = {
    "invalid-input-500": {"ERRORS-002", "FUZZ-001"},
    "usage-total-wrong": {"USAGE-001"},
    "done-missing": {"SSE-005"},
    "content-type-wrong": {"CONTENT-TYPE-001"},
    "logprobs-positive": {"LOGPROBS-008"},
    "error-no-envelope": {"ERRORS-003"},
    "disconnect-mid-stream": {"SSE-008"},
}
SHORT_BODY = 120
"""Bytes a shrunk reproduction's body may take at most."""


def fuzz_fault(url: str, fault: str, tmp_path: Path, *extra: str) -> tuple[int, dict, str]:
    report = tmp_path / f"{fault}.json"
    status, out, err = run_cli([
        "fuzz", "--base-url", url, "--model", "reference-ngram", "--max-examples", "30",
        "--seed", "1", "--workers", "2", "-q", "--header", f"X-Mock-Fault: {fault}",
        "--json", str(report), *extra,
    ])
    assert status in (0, 1), err
    return status, json.loads(report.read_text()), out


@pytest.mark.parametrize("fault", sorted(REPRESENTATIVE))
def test_a_fault_is_found_and_shrunk(mock: EmbeddedMock, fault: str, tmp_path: Path) -> None:
    status, report, out = fuzz_fault(mock.openai_url, fault, tmp_path)
    assert status == 1
    assert REPRESENTATIVE[fault] <= found_rules(report), out
    for finding in findings(report):
        body = finding["request"]["body"]
        assert len(body) <= SHORT_BODY, finding["request"]
        if body.startswith("{"):  # a stream cut short is shrunk too
            assert finding["shrunk"], finding
            sent = json.loads(body)  # the model says what is tested: never shrunk
            assert sent.get("model", "reference-ngram") == "reference-ngram", finding
        assert "$X_MOCK_FAULT" in finding["curl"] and fault not in finding["curl"]


def test_a_friendli_fault_is_found(mock: EmbeddedMock, tmp_path: Path) -> None:
    status, report, out = fuzz_fault(mock.friendli_url, "token-field-missing", tmp_path,
                                     "--profile", "friendli", "--phases", "examples,fuzzing")
    assert status == 1
    assert "FRIENDLI-002" in found_rules(report), out


def test_the_shrunk_reproduction_reproduces(mock: EmbeddedMock, tmp_path: Path) -> None:
    import requests

    _, report, _ = fuzz_fault(mock.openai_url, "usage-total-wrong", tmp_path)
    [finding] = [f for f in findings(report) if f["rule"] == "USAGE-001"]
    answer = requests.post(finding["request"]["url"], data=finding["request"]["body"],
                           headers={"Content-Type": "application/json",
                                    "X-Mock-Fault": "usage-total-wrong"}, timeout=30).json()
    usage = answer["usage"]
    assert usage["total_tokens"] != usage["prompt_tokens"] + usage["completion_tokens"]


def test_a_refused_valid_request_is_schemathesis_acceptance_finding_only(
        mock: EmbeddedMock, tmp_path: Path) -> None:
    """The run fails every rule whose probe was refused (conformance/run/check_context.py); the
    fuzzer does not: its mutations may make a request the contract calls valid unfit to
    answer, so acceptance is schemathesis's positive_data_acceptance alone (a live fuzz of
    Prism, answering 415 to a mutated media type, got six LOGPROBS findings for it)."""
    _, report, out = fuzz_fault(mock.openai_url, "prompt-list-500", tmp_path, "--no-shrink")
    messages = [f["message"] for f in findings(report)]
    assert not [m for m in messages if "was refused" in m], out


@pytest.mark.parametrize("fault", [None, "stream-options-ignored-error"])
def test_the_examples_phase_breaks_each_cross_field_rule_of_the_profile(
        served: Callable[[str], EmbeddedMock], fault: str | None, tmp_path: Path) -> None:
    """Generated bodies are repaired to meet the cross-field rules, so the examples phase adds
    one case per rule: vLLM, which takes an unstreamed ``stream_options: {}``, still has
    ERRORS-004 judged (and failed when its rule is ignored)."""
    header = ["--header", f"X-Mock-Fault: {fault}"] if fault else []
    report_path = tmp_path / "report.json"
    status, out, err = run_cli([
        "fuzz", "--base-url", served("vllm").openai_url, "--profile", "vllm", "--model",
        "reference-ngram", "--phases", "examples", "--select", "ERRORS-004", "-q",
        "--json", str(report_path), *header,
    ])
    report = json.loads(report_path.read_text())
    (result,) = [r for r in report["results"] if r["rule"] == "ERRORS-004"]
    assert result["verdict"] == ("FAIL" if fault else "PASS"), (out, err)
    assert status == (1 if fault else 0), (out, err)


@pytest.mark.slow
def test_the_clean_mock_passes_a_short_fuzz_of_vllms_profile(
        served: Callable[[str], EmbeddedMock], tmp_path: Path) -> None:
    """The fuzzer draws vLLM's own request (its extra fields, its limits): the mock serving
    that profile takes every valid one (allowed_token_ids, truncate_prompt_tokens, a clamped
    logit_bias) and refuses what vLLM's checks refuse."""
    status, out, err = run_cli([
        "fuzz", "--base-url", served("vllm").openai_url, "--profile", "vllm", "--model",
        "reference-ngram", "--max-examples", "60", "--seed", "1", "-q",
    ])
    assert status == 0, out + err
