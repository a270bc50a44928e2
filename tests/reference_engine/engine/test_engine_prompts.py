"""``Engine.complete_prompts``: the completion prompt by prompt, each part final.

The mock renders and stops large requests between these parts, so each part must already be
what the whole answer holds: its choices' indices, seeds and errors, with nothing to renumber.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from reference_engine import ContextLengthError, Engine, GenerationRequest, SamplingParams
from reference_engine.results import Completion

ENGINE = Engine()
PROMPTS = ("Hello there", "The Python language", (464, 318))


def _request(**fields: Any) -> GenerationRequest:
    base: dict[str, Any] = {"prompts": PROMPTS, "max_tokens": 5,
                            "sampling": SamplingParams(temperature=1.0)}
    return GenerationRequest(**{**base, **fields})


@pytest.mark.parametrize("fields", [
    {"seed": 7, "n": 2},
    {"seed": 7, "n": 2, "best_of": 3},
    {"seed": (5, 9), "n": 2, "echo": True, "logprobs": 2},
])
def test_each_part_is_its_prompt_alone_numbered_as_in_the_whole(fields: dict[str, Any]) -> None:
    request = _request(**fields)
    parts = list(ENGINE.complete_prompts(request))
    assert len(parts) == len(PROMPTS)
    for p, (prompt, part) in enumerate(zip(PROMPTS, parts, strict=True)):
        alone = ENGINE.complete(replace(request, prompts=(prompt,)))
        assert [c.index for c in part.choices] == [p * request.n + k for k in range(request.n)]
        assert [replace(c, index=k) for k, c in enumerate(part.choices)] == list(alone.choices)
        assert part.usage == alone.usage
    assert Completion.joined(parts) == ENGINE.complete(request)


def test_a_prompt_error_names_its_prompt_and_comes_when_its_part_is_drawn() -> None:
    parts = ENGINE.complete_prompts(_request(prompts=("Hi", "Hi " * 1500), max_tokens=1000))
    first = next(parts)
    assert [c.index for c in first.choices] == [0]
    with pytest.raises(ContextLengthError, match="prompt 1 ") as raised:
        next(parts)
    assert raised.value.param == "prompt"


def test_request_wide_errors_come_at_the_call() -> None:
    with pytest.raises(Exception, match="logit_bias"):
        ENGINE.complete_prompts(_request(
            sampling=SamplingParams(temperature=1.0, logit_bias={10**9: 1.0}), seed=1))


@pytest.mark.parametrize("best_of", [None, 3])
def test_unseeded_prompts_share_the_seeds_drawn_once(best_of: int | None) -> None:
    completion = Completion.joined(ENGINE.complete_prompts(
        _request(prompts=("Hello",) * 3, n=2, best_of=best_of)))
    assert [c.index for c in completion.choices] == list(range(6))
    assert [c.text for c in completion.choices[:2]] == [c.text for c in completion.choices[2:4]]
    if best_of is None:
        assert [c.seed for c in completion.choices[:2]] == [c.seed for c in completion.choices[4:]]


@pytest.mark.parametrize(("fields", "expected"), [
    ({"seed": 1}, True),
    ({"seed": (1,)}, True),
    ({"sampling": SamplingParams(temperature=0.0)}, True),
    ({"sampling": SamplingParams(temperature=1e-7)}, True),
    ({}, False),
    ({"sampling": SamplingParams(temperature=0.5, top_k=1)}, False),
])
def test_deterministic_requests_are_seeded_or_greedy(fields: dict[str, Any],
                                                     expected: bool) -> None:
    assert Engine.deterministic(_request(**fields)) is expected
