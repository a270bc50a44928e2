"""Never a PASS on a refusal: a valid request answered 400 judges no rule bound to fuzzing.

One fuzzed exchange is judged by each rule whose binding takes it. A request the contract calls
valid that the server refuses with a proper error body holds no answer a completion rule could
read; the rules that judge refusals of valid requests do so in the run (ERRORS-008), and in a
fuzz run schemathesis' own acceptance check does. So no rule may count such an exchange as
judged, or a server that refuses everything would be reported as passing them.
"""

from __future__ import annotations

import json

import pytest
from fuzz_support import MODEL, sample, settings

from conformance.bindings.binders import binder_for
from conformance.fuzz.bodies import Caps
from conformance.fuzz.checks import FuzzRun, judge, select_rules
from conformance.model import Rule

ERROR = json.dumps({"error": {"message": "refused", "type": "invalid_request_error",
                              "param": None, "code": None}}).encode()
BASE = {"model": MODEL, "prompt": "Hi there", "max_tokens": 3}
USAGE = {"stream": True, "stream_options": {"include_usage": True}}
BODIES = [
    BASE,
    {**BASE, "stream": True},
    {**BASE, **USAGE},
    {**BASE, "logprobs": 0},
    {**BASE, "logprobs": 2},
    {**BASE, "logprobs": 2, **USAGE},
    {**BASE, "echo": True, "logprobs": 0},
    {**BASE, "stop": ["."]},
    {**BASE, "stop": ["."], **USAGE},
    {**BASE, "n": 2, "temperature": 1},
    {**BASE, "no_repeat_ngram": 2},
    {**BASE, "forced_output_tokens": [1, 2]},
]
"""Valid requests of every shape a binding takes (FriendliAI's fields under ``friendli``)."""
NEEDS_AN_ANSWER = {"independent-samples"}
"""Bindings that read the answer to decide (its logprobs): a refusal is never bound by them."""


def _fuzz(profile_name: str) -> FuzzRun:
    chosen = settings(profile_name)
    return FuzzRun(chosen, select_rules(chosen, strict=True), Caps(),
                   operations={"POST /v1/completions": "completions"})


def _cases(profile_name: str) -> list[tuple[str, Rule]]:
    return [(profile_name, rule) for rule in _fuzz(profile_name).rules if rule.fuzz != "invalid"]


CASES = [case for profile_name in ("openai", "openai-compatible", "vllm", "friendli")
         for case in _cases(profile_name)]


@pytest.mark.parametrize(("profile_name", "rule"), CASES,
                         ids=[f"{profile_name}-{rule.id}" for profile_name, rule in CASES])
def test_a_refused_valid_request_is_judged_by_no_rule(profile_name: str, rule: Rule) -> None:
    fuzz = _fuzz(profile_name)
    binder = binder_for(rule)
    assert binder is not None
    if rule.fuzz == "models-list":
        samples = [sample(None, ERROR, status=400, profile_name=profile_name, operation="models")]
    else:
        samples = [sample(body, ERROR, status=400, profile_name=profile_name) for body in BODIES]
        samples = [each for each in samples if each.valid]
    bound = [each for each in samples if binder(each) is not None]
    assert bound or rule.fuzz in NEEDS_AN_ANSWER, f"no refused request of {rule.id}'s shape"
    for each in bound:
        assert judge(rule, fuzz, each) is None, f"{rule.id} failed a refusal"
    assert fuzz.judged.get(rule.id, 0) == 0, f"{rule.id} counted a refusal as judged"
