"""Token ids learned from the server's tokenizer endpoint: a server that refuses token-id prompts
(llama-cpp-python answers them 500) is still judged on ``logit_bias -100`` (PARAMS-002), when it
serves its tokenizer (the mock does, as llama.cpp's server: ``/tokenize``, ``/detokenize``)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from conformance.cli import main
from conformance.target.embedded import EmbeddedMock


def run(url: str, faults: str, report: Path) -> dict[str, dict]:
    out, err = io.StringIO(), io.StringIO()
    status = main(["run", "-q", "--base-url", url, "--select", "PARAMS-002,PARAMS-003",
                   "--header", f"X-Mock-Fault: {faults}", "--json", str(report)], out, err)
    assert status in (0, 1), out.getvalue() + err.getvalue()
    data = json.loads(report.read_text())
    return {item["rule"]: item for item in data["results"]} | {"": data}


def test_without_token_prompts_the_ban_is_aimed_by_the_tokenizer(
    mock: EmbeddedMock, tmp_path: Path
) -> None:
    results = run(mock.openai_url, "token-prompt-rejected", tmp_path / "r.json")
    assert results["PARAMS-002"]["verdict"] == "PASS", results["PARAMS-002"]
    assert results["PARAMS-003"]["verdict"] == "PASS", results["PARAMS-003"]
    exchanges = results[""]["exchanges"]
    assert any(label.startswith("logit-bias/tokenize-") for label in exchanges), list(exchanges)


def test_a_bias_the_server_ignores_fails_with_the_learned_id(
    mock: EmbeddedMock, tmp_path: Path
) -> None:
    results = run(mock.openai_url, "token-prompt-rejected,logit-bias-ignored",
                  tmp_path / "r.json")
    assert results["PARAMS-002"]["verdict"] == "FAIL", results["PARAMS-002"]
    assert results["PARAMS-003"]["verdict"] == "FAIL", results["PARAMS-003"]
