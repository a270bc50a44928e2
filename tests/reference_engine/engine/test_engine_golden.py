"""The determinism contract, pinned: these requests must give exactly these outputs.

The same artifact version, request and seed give the same bytes in any process, on any
machine, on every supported Python. ``golden/engine_outputs.json`` holds requests and their
exact outputs (every float as its shortest round-trip repr). When the artifacts or the engine
change on purpose, regenerate it with ``UPDATE_GOLDEN=1 pytest tests/reference_engine`` and
say why in the commit; any other difference is a determinism bug.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from reference_engine import Engine, GenerationRequest, SamplingParams

GOLDEN = Path(__file__).parent / "golden" / "engine_outputs.json"

REQUESTS: list[dict] = [
    {"prompts": ["The Python language"], "seed": 1, "max_tokens": 24},
    {"prompts": ["The Python language"], "seed": 0, "max_tokens": 24,
     "sampling": {"temperature": 0.0}, "logprobs": 3, "echo": True},
    {"prompts": ["Lists are", "A dictionary"], "n": 2, "seed": 42, "max_tokens": 20,
     "logprobs": 0, "stop": [".", "\n\n"]},
    {"prompts": [[464, 300, 1361]], "seed": 7, "max_tokens": 16,
     "sampling": {"temperature": 0.7, "top_p": 0.9, "top_k": 40, "presence_penalty": 0.6,
                  "frequency_penalty": 0.4, "logit_bias": {"13": -100, "262": 5}}},
    {"prompts": ["Unicode: caf\u00e9 \u65e5\u672c \U0001f600"], "seed": 3, "max_tokens": 24,
     "logprobs": 2, "sampling": {"temperature": 1.2, "min_p": 0.02,
                                 "repetition_penalty": 1.3, "no_repeat_ngram": 3}},
    {"prompts": ["{"], "seed": 5, "max_tokens": 40,
     "sampling": {"temperature": 0.9, "response_format": "json_object",
                  "xtc_threshold": 0.2, "xtc_probability": 0.5}},
    {"prompts": ["The"], "seed": 11, "n": 2, "best_of": 4, "max_tokens": 12, "logprobs": 1},
    {"prompts": ["The"], "seed": [3, 9], "n": 2, "max_tokens": 12, "min_total_tokens": 6,
     "stop_token_sequences": [[13]], "eos_token_ids": [11]},
]


def _request(spec: dict) -> GenerationRequest:
    spec = dict(spec)
    sampling = dict(spec.pop("sampling", {}))
    if "logit_bias" in sampling:
        sampling["logit_bias"] = {int(k): v for k, v in sampling["logit_bias"].items()}
    prompts = tuple(p if isinstance(p, str) else tuple(p) for p in spec.pop("prompts"))
    for key in ("stop",):
        if key in spec:
            spec[key] = tuple(spec[key])
    for key in ("stop_token_sequences",):
        if key in spec:
            spec[key] = tuple(tuple(s) for s in spec[key])
    for key in ("eos_token_ids", "seed"):
        if isinstance(spec.get(key), list):
            spec[key] = tuple(spec[key])
    return GenerationRequest(prompts=prompts, sampling=SamplingParams(**sampling), **spec)


def _output(spec: dict) -> dict:
    completion = Engine().complete(_request(spec))
    return json.loads(json.dumps(dataclasses.asdict(completion)))


def test_golden_outputs() -> None:
    outputs = [{"request": spec, "output": _output(spec)} for spec in REQUESTS]
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_text(json.dumps(outputs, indent=1, ensure_ascii=False) + "\n", "utf-8")
    expected = json.loads(GOLDEN.read_text("utf-8"))
    assert [case["request"] for case in expected] == REQUESTS, "requests changed: regenerate"
    for case, actual in zip(expected, outputs, strict=False):
        assert actual["output"] == case["output"], f"output changed for {case['request']}"

