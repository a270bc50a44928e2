"""SAMPLING-001/002 and FRIENDLI-016..019 over hand-built exchanges: what a real server may do
passes (a penalty that changes the answer anywhere, banned ids absent, forced ids first) and
the defects fail. The fault meta-test runs them on the mock."""

from __future__ import annotations

from harness_support import MODEL, json_exchange, rule

import spec
from conformance.probes import ProbeOutcome
from conformance.probes.samplers_huggingface import BASELINES
from conformance.probes.sampling_fields import first_word
from conformance.run.runner import evaluate
from conformance.run.settings import Settings

FRIENDLI = spec.get_profile("friendli")
OPENAI = spec.get_profile("openai")


def answer(text: str, tokens: list | None = None, lp_tokens: list[str] | None = None) -> dict:
    choice: dict = {"index": 0, "text": text, "finish_reason": "length", "logprobs": None}
    if tokens is not None:
        choice["tokens"] = tokens
    if lp_tokens is not None:
        choice["logprobs"] = {"tokens": lp_tokens, "token_logprobs": [-1.0] * len(lp_tokens),
                              "top_logprobs": [{t: -1.0} for t in lp_tokens],
                              "text_offset": list(range(len(lp_tokens)))}
    return {"id": "c", "object": "text_completion", "model": MODEL, "choices": [choice],
            "usage": {"prompt_tokens": 2, "completion_tokens": 3, "total_tokens": 5}}


def outcome(name: str, notes: dict | None = None, **steps: dict) -> ProbeOutcome:
    return ProbeOutcome(name, exchanges={k: json_exchange(v, request_body={"prompt": "x"})
                                         for k, v in steps.items()},
                        requests={k: {"prompt": "x"} for k in steps}, notes=notes or {})


def verdict(rule_id: str, profile: spec.Profile, *outcomes: ProbeOutcome) -> str:
    settings = Settings("http://x.test/v1", profile, MODEL, profile.features)
    return evaluate(rule(rule_id), settings, {o.name: o for o in outcomes}, {}).verdict.value


def test_a_penalty_must_change_a_repeating_greedy_answer() -> None:
    looping = answer("a,b,c", lp_tokens=["a", ",", "b", ",", "c"])
    changed = outcome("penalties", {"repeating": "greedy"}, greedy=looping,
                      presence=answer("a,b;c"), frequency=answer("a,b,c"))
    assert verdict("SAMPLING-001", OPENAI, changed) == "PASS"
    assert verdict("SAMPLING-002", OPENAI, changed) == "NON_STRICT"


def test_the_penalized_answer_is_compared_with_the_greedy_one_that_repeats() -> None:
    """A later try (longer, or the repeated phrase) is the one the penalized twins follow."""
    longer = outcome("penalties", {"repeating": "greedy-longer"},
                     greedy=answer("abc", lp_tokens=["a", "b", "c"]),
                     **{"greedy-longer": answer("abcabc")}, presence=answer("abcabc"),
                     frequency=answer("abc"))
    assert verdict("SAMPLING-001", OPENAI, longer) == "NON_STRICT"
    assert verdict("SAMPLING-002", OPENAI, longer) == "PASS"


def test_no_repeating_answer_skips_saying_what_was_tried() -> None:
    reason = "no greedy answer repeats one of its tokens: tried 16 tokens of 'Example:'"
    unique = outcome("penalties", {"unrepeated": reason},
                     greedy=answer("abc", lp_tokens=["a", "b", "c"]))
    settings = Settings("http://x.test/v1", OPENAI, MODEL, OPENAI.features)
    result = evaluate(rule("SAMPLING-001"), settings, {"penalties": unique}, {})
    assert (result.verdict.value, result.message) == ("SKIP", reason)


def test_banned_and_forced_token_ids() -> None:
    base = outcome(BASELINES, looping=answer("abc", [5, 6, 7]), ending=answer("de", [8, 9]))
    banned = outcome("bad-words", {"tokens": [5], "word": "abc"},
                     tokens=answer("xyz", [1, 2, 3]), words=answer("xyz", [1, 2, 3]))
    leaked = outcome("bad-words", {"tokens": [5], "word": "abc"},
                     tokens=answer("xaz", [1, 5, 3]), words=answer("abcd", [5, 6, 7]))
    assert verdict("FRIENDLI-017", FRIENDLI, base, banned) == "PASS"
    assert verdict("FRIENDLI-018", FRIENDLI, base, banned) == "PASS"
    assert verdict("FRIENDLI-017", FRIENDLI, base, leaked) == "FAIL"
    assert verdict("FRIENDLI-018", FRIENDLI, base, leaked) == "NON_STRICT"
    forced = outcome("forced-output", {"forced": [8, 9]}, forced=answer("de!", [8, 9, 4]))
    free = outcome("forced-output", {"forced": [8, 9]}, forced=answer("abc", [5, 6, 7]))
    assert verdict("FRIENDLI-019", FRIENDLI, base, forced) == "PASS"
    assert verdict("FRIENDLI-019", FRIENDLI, base, free) == "FAIL"


def test_top_k_1_is_greedy() -> None:
    base = outcome(BASELINES, looping=answer("abc", [5, 6, 7]))
    assert verdict("FRIENDLI-016", FRIENDLI, base,
                   outcome("top-k", sampled=answer("abc"))) == "PASS"
    assert verdict("FRIENDLI-016", FRIENDLI, base,
                   outcome("top-k", sampled=answer("abd"))) == "NON_STRICT"


def test_the_banned_word_is_the_first_word_with_its_space() -> None:
    assert first_word("\n\n   >>> def f") == " >>>"
    assert first_word("Hello world") == "Hello" and first_word("   ") is None
