"""lm-eval itself against the mock (opt-in: ``pytest -m lm_eval -n 0``), as docs/lm-eval runs it.

Exports the tokenizer, starts the mock, and runs lm-eval's ``local-completions`` on the two
local tasks of ``docs/lm-eval/`` twice, offline (``HF_*_OFFLINE``, a fresh Hugging Face cache).
Both runs must end, give the same scores, and score every (context, continuation) as the
recorded run in ``tests/fixtures/lm_eval/`` did, so that fixture still describes the mock.
lm-eval is heavy and no dependency of ours: install it (``pip install 'lm-eval[api]'
transformers``) into this venv, or put its ``lm_eval`` command on ``PATH``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.target.embedded import EmbeddedMock

pytestmark = pytest.mark.lm_eval

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "lm_eval" / "lm_eval_run.json"
TASKS = "refmodel_mc,refmodel_text"


def lm_eval_command() -> list[str]:
    if importlib.util.find_spec("lm_eval") is not None:
        return [sys.executable, "-m", "lm_eval"]
    found = shutil.which("lm_eval")
    if found is None:
        pytest.skip("lm-eval is not installed: pip install 'lm-eval[api]' transformers")
    return [found]


def run_lm_eval(base_url: str, tokenizer: Path, out: Path, cache: Path) -> dict:
    model_args = (f"model=reference-ngram,base_url={base_url}/completions,"
                  f"tokenizer={tokenizer},tokenizer_backend=huggingface,max_retries=1")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "HF_HOME": str(cache)}
    subprocess.run([*lm_eval_command(), "--model", "local-completions", "--model_args",
                    model_args, "--batch_size", "4", "--include_path", "docs/lm-eval",
                    "--tasks", TASKS, "--output_path", str(out), "--log_samples"],
                   cwd=ROOT, env=env, check=True, timeout=600)
    (results,) = out.rglob("results_*.json")
    return json.loads(results.read_text(encoding="utf-8"))


def scores(results: dict) -> dict:
    return {task: {k: v for k, v in metrics.items() if "," in k}
            for task, metrics in results["results"].items()}


def test_readme_lm_eval_run_ends_the_same_twice(tmp_path: Path) -> None:
    tokenizer = tmp_path / "tokenizer"
    subprocess.run([sys.executable, "-m", "reference_engine.tokenizer", "export",
                    str(tokenizer)], check=True, capture_output=True)
    with EmbeddedMock() as mock:
        first = run_lm_eval(mock.openai_url, tokenizer, tmp_path / "one", tmp_path / "hf")
        second = run_lm_eval(mock.openai_url, tokenizer, tmp_path / "two", tmp_path / "hf")
    assert scores(first) == scores(second)
    assert set(scores(first)) == set(TASKS.split(","))
    assert 0 <= scores(first)["refmodel_mc"]["acc,none"] <= 1
    recorded = {(e["context"], e["continuation"]): (e["logprob"], e["is_greedy"])
                for e in json.loads(FIXTURE.read_text(encoding="utf-8"))["loglikelihood"]}
    (samples,) = (tmp_path / "one").rglob("samples_refmodel_mc_*.jsonl")
    for line in samples.read_text(encoding="utf-8").splitlines():
        sample = json.loads(line)
        for arguments, (logprob, greedy) in zip(sample["arguments"].values(),
                                                sample["filtered_resps"], strict=True):
            key = (arguments["arg_0"], arguments["arg_1"])
            assert recorded[key] == (float(logprob), greedy == "True"), key
