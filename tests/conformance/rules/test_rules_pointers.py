"""A SKIP names another rule only when that rule fails on the same answers (issue 50): on Prism
FINISH-005 said "is max_tokens honoured? PARAMS-007" while PARAMS-007 passed, and PARAMS-002
named ERRORS-008, which passed. Over hand-built exchanges: the reason follows what failed."""

from __future__ import annotations

from harness_support import MODEL, json_exchange, rule

import spec
from conformance.model import RuleResult
from conformance.model.coverage import dangling_pointers
from conformance.probes import ProbeOutcome
from conformance.run.runner import evaluate
from conformance.run.settings import Settings

OPENAI = spec.get_profile("openai")
SETTINGS = Settings("http://x.test/v1", OPENAI, MODEL, OPENAI.features)


def answer(text: str, completion_tokens: int) -> dict:
    return {"id": "c", "object": "text_completion", "created": 1, "model": MODEL,
            "choices": [{"index": 0, "text": text, "finish_reason": "length", "logprobs": None}],
            "usage": {"prompt_tokens": 2, "completion_tokens": completion_tokens,
                      "total_tokens": 2 + completion_tokens}}


def one(name: str, key: str, body: dict, max_tokens: int, notes: dict | None = None
        ) -> ProbeOutcome:
    request = {"model": MODEL, "prompt": "A list is", "max_tokens": max_tokens}
    return ProbeOutcome(name, exchanges={key: json_exchange(body, request_body=request)},
                        requests={key: request}, notes=notes or {})


def results(*outcomes: ProbeOutcome, rules: tuple[str, ...]) -> dict[str, RuleResult]:
    by_name = {o.name: o for o in outcomes}
    return {r: evaluate(rule(r), SETTINGS, by_name, {}) for r in rules}


def test_finish_005_names_params_007_only_when_it_fails() -> None:
    """The spec's static example answers both runs alike: no cut to judge, and nothing
    wrong with max_tokens while the example has no more tokens than asked for."""
    static = answer("This is indeed a test", 3)
    got = results(one("greedy", "ns", static, 16), one("length", "short", static, 3),
                  rules=("FINISH-005", "PARAMS-007"))
    assert got["PARAMS-007"].verdict.value == "PASS"
    assert got["FINISH-005"].verdict.value == "SKIP"
    assert "PARAMS-007" not in got["FINISH-005"].message
    assert "cut nothing" in got["FINISH-005"].message
    assert dangling_pointers(got.values()) == {}
    overrun = answer("This is indeed a test", 4)
    got = results(one("greedy", "ns", overrun, 16), one("length", "short", overrun, 3),
                  rules=("FINISH-005", "PARAMS-007"))
    assert got["PARAMS-007"].verdict.value == "FAIL"
    assert got["FINISH-005"].message.endswith("(is max_tokens honoured? PARAMS-007)")


def test_finish_005_says_where_two_greedy_runs_part() -> None:
    got = results(one("greedy", "ns", answer(" your words go here", 4), 16),
                  one("length", "short", answer(" my words", 2), 3), rules=("FINISH-005",))
    message = got["FINISH-005"].message
    assert "is not a prefix" in message and "PARAMS-007" not in message
