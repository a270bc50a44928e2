"""Build ``tests/fixtures/lm_eval/lm_eval_run.json`` from one recorded lm-eval run.

Inputs: the JSON lines ``record_requests.py`` wrote while lm-eval ran through it, and the
directory of lm-eval's ``--log_samples`` output. The fixture keeps the request bodies exactly as
lm-eval sent them, and what lm-eval computed from the answers: per (context, continuation) its
``(logprob, is_greedy)``, per rolling text its summed logprob. The replay test
(``tests/mockserver/test_mock_lm_eval_replay.py``) sends the bodies again and recomputes both::

    python docs/lm-eval/make_fixture.py --requests requests.jsonl --samples OUT/reference-ngram \\
        --lm-eval-version 0.4.13 --out tests/fixtures/lm_eval/lm_eval_run.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def _samples(directory: Path, task: str) -> list[dict]:
    (path,) = sorted(directory.glob(f"samples_{task}_*.jsonl"))
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=Path, required=True)
    parser.add_argument("--samples", type=Path, required=True)
    parser.add_argument("--lm-eval-version", required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    lines = args.requests.read_text(encoding="utf-8").splitlines()
    loglikelihood = []
    for sample in _samples(args.samples, "refmodel_mc"):
        for arguments, (logprob, is_greedy) in zip(
                sample["arguments"].values(), sample["filtered_resps"], strict=True):
            loglikelihood.append({"context": arguments["arg_0"],
                                  "continuation": arguments["arg_1"],
                                  "logprob": float(logprob), "is_greedy": is_greedy == "True"})
    rolling = [{"text": sample["arguments"]["gen_args_0"]["arg_0"],
                "logprob": float(sample["filtered_resps"][0])}
               for sample in _samples(args.samples, "refmodel_text")]
    fixture = {
        "lm_eval_version": args.lm_eval_version,
        "tasks": ["refmodel_mc", "refmodel_text"],
        "requests": [json.loads(line)["request"] for line in lines],
        "loglikelihood": loglikelihood,
        "loglikelihood_rolling": rolling,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(fixture, ensure_ascii=False, indent=1) + "\n",
                        encoding="utf-8")


if __name__ == "__main__":
    main()
