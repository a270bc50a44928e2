"""The generation loop's fast path for requests without history-based processors.

Without penalties, bans or ``json_object``, ``ChoiceRun.events`` keeps its first sampling
context instead of advancing it every step. Outputs must be exactly those of the general loop
(which advances the context and runs ``process_logits`` every step): same tokens, text,
logprobs (bit for bit) and finish reasons.
"""

from __future__ import annotations

from typing import Any

import pytest

from reference_engine import Engine, GenerationRequest, SamplingParams
from reference_engine.generation import choice as choice_module

ENGINE = Engine()

REQUESTS: list[dict[str, Any]] = [
    {"sampling": SamplingParams(), "max_tokens": 40},
    {"sampling": SamplingParams(min_tokens=12), "max_tokens": 20, "logprobs": 3},
    {"sampling": SamplingParams(temperature=0.7, top_p=0.8, min_tokens=4), "max_tokens": 24,
     "n": 3, "stop": (" the", ".")},
    {"sampling": SamplingParams(temperature=1.3, top_k=40, min_p=0.02), "max_tokens": 30,
     "stop_token_sequences": ((13,),), "echo": True, "logprobs": 1},
    {"sampling": SamplingParams(temperature=0.0), "max_tokens": 16, "best_of": 3, "n": 2},
    {"sampling": SamplingParams(min_tokens=5), "max_tokens": 12, "eos_token_ids": (13, 198),
     "forced_output_tokens": (464, 13)},
]


def run_all(request: GenerationRequest) -> tuple[Any, list[Any]]:
    return ENGINE.complete(request), list(ENGINE.stream(request)) if not request.best_of else []


@pytest.mark.parametrize("fields", REQUESTS)
@pytest.mark.parametrize("seed", [0, 7, 123456789])
def test_fast_path_gives_the_general_loops_output(
    fields: dict[str, Any], seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    request = GenerationRequest(prompts=("The Python language", "Hi"), seed=seed, **fields)
    assert choice_module._static_context(request.sampling)
    fast = run_all(request)
    monkeypatch.setattr(choice_module, "_static_context", lambda params: False)
    general = run_all(request)
    assert fast == general
    for choice in fast[0].choices:
        assert choice.token_ids  # something was generated
