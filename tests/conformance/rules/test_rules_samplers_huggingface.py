"""FRIENDLI-010..015 over hand-built exchanges: the valid behaviours a real server may show pass
(a penalty that turns away earlier, a min_tokens answer cut by max_tokens, an n-gram ban that
also counts the prompt), and the defects fail. The fault meta-test runs them on the mock."""

from __future__ import annotations

from harness_support import MODEL, json_exchange, rule

import spec
from conformance.probes import ProbeOutcome
from conformance.probes.samplers_huggingface import BASELINES
from conformance.rules.samplers_huggingface import first_repeat, repeated_ngram
from conformance.run.runner import evaluate
from conformance.run.settings import Settings

PROFILE = spec.get_profile("friendli")
SETTINGS = Settings("http://x.test/dedicated/v1", PROFILE, MODEL, PROFILE.features)


def answer(tokens: list[int], *, prompt: int = 3, text: str | None = None,
           finish: str = "length") -> dict:
    return {
        "id": "c", "object": "text_completion", "model": MODEL,
        "choices": [{"index": 0, "text": text if text is not None else "x" * len(tokens),
                     "tokens": tokens, "finish_reason": finish}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": len(tokens),
                  "total_tokens": prompt + len(tokens)},
    }


def outcome(name: str, **steps: tuple[dict, dict]) -> ProbeOutcome:
    """A probe's outcome from ``key=(request body, response body)``."""
    return ProbeOutcome(
        name,
        exchanges={k: json_exchange(resp, request_body=req) for k, (req, resp) in steps.items()},
        requests={k: req for k, (req, _resp) in steps.items()},
    )


def verdict(rule_id: str, *outcomes: ProbeOutcome) -> str:
    return evaluate(rule(rule_id), SETTINGS, {o.name: o for o in outcomes}, {}).verdict.value


LOOPING = [5, 6, 7, 6, 8, 9]  # token 6 repeats at position 3
BASE = outcome(BASELINES, looping=({"prompt": "Example:"}, answer(LOOPING, text="abcbde")))


def test_the_helpers_find_the_first_repeats() -> None:
    assert first_repeat(LOOPING) == 3
    assert first_repeat([1, 2, 3]) is None
    assert repeated_ngram([1, 2, 3, 1, 2], 2) == (0, 3)
    assert repeated_ngram([1, 2, 1, 3, 2, 1], 3) is None


def test_min_tokens_passes_when_cut_by_max_tokens_and_fails_when_ended_early() -> None:
    body = {"min_tokens": 12, "max_tokens": 16}
    long = outcome("min-tokens", min=(body, answer(list(range(16)))))
    exact = outcome("min-tokens", min=(body, answer(list(range(12)), finish="stop")))
    short = outcome("min-tokens", min=(body, answer(list(range(8)), finish="stop")))
    assert verdict("FRIENDLI-010", long) == "PASS"
    assert verdict("FRIENDLI-010", exact) == "PASS"  # EOS not counted: still 12 generated
    assert verdict("FRIENDLI-010", short) == "FAIL"


def test_total_token_bounds_count_the_prompt() -> None:
    least = outcome("min-total-tokens",
                    min=({"min_total_tokens": 21}, answer(list(range(12)), prompt=9)))
    short = outcome("min-total-tokens",
                    min=({"min_total_tokens": 21}, answer(list(range(8)), prompt=9)))
    assert verdict("FRIENDLI-011", least) == "PASS"
    assert verdict("FRIENDLI-011", short) == "FAIL"
    within = outcome("max-total-tokens",
                     max=({"max_total_tokens": 13}, answer(list(range(4)), prompt=9)))
    over = outcome("max-total-tokens",
                   max=({"max_total_tokens": 13}, answer(list(range(5)), prompt=9)))
    assert verdict("FRIENDLI-012", within) == "PASS"
    assert verdict("FRIENDLI-012", over) == "FAIL"


def test_no_repeat_ngram_judges_the_generated_ids() -> None:
    body = {"no_repeat_ngram": 2}
    clean = outcome("no-repeat-ngram", banned=(body, answer([1, 2, 1, 3, 2, 4])))
    repeated = outcome("no-repeat-ngram", banned=(body, answer([1, 2, 3, 1, 2])))
    assert verdict("FRIENDLI-013", clean) == "PASS"
    assert verdict("FRIENDLI-013", repeated) == "FAIL"


def test_a_penalty_that_turns_away_at_or_before_the_repeat_passes() -> None:
    for tokens in ([5, 6, 7, 10, 8, 9], [5, 11, 12, 13, 14, 15]):  # at the repeat, or earlier
        penalized = outcome("repetition-penalty", penalized=({}, answer(tokens)))
        assert verdict("FRIENDLI-014", BASE, penalized) == "PASS", tokens
    ignored = outcome("repetition-penalty", penalized=({}, answer([5, 6, 7, 6, 1, 2])))
    assert verdict("FRIENDLI-014", BASE, ignored) == "NON_STRICT"


def test_a_baseline_without_repeats_leaves_the_penalty_unjudged() -> None:
    base = outcome(BASELINES, looping=({}, answer([1, 2, 3])))
    penalized = outcome("repetition-penalty", penalized=({}, answer([1, 2, 3])))
    assert verdict("FRIENDLI-014", base, penalized) == "SKIP"


def test_min_p_one_must_sample_the_greedy_text() -> None:
    same = outcome("min-p", sampled=({}, answer(LOOPING, text="abcbde")))
    other = outcome("min-p", sampled=({}, answer(LOOPING, text="abcxyz")))
    assert verdict("FRIENDLI-015", BASE, same) == "PASS"
    assert verdict("FRIENDLI-015", BASE, other) == "NON_STRICT"
