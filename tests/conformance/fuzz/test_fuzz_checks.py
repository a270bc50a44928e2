"""The catalog's rules as schemathesis checks: adapter, bindings and failures."""

from __future__ import annotations

import pytest
import schemathesis
from fuzz_support import chunk, completion, response, sample, settings, sse
from schemathesis.checks import CHECKS

import spec
from conformance.bindings.binders import (
    BINDERS,
    binder_for,
    echo_scored,
    invalid,
    logprobs,
    stopped,
)
from conformance.fuzz.bodies import Caps
from conformance.fuzz.checks import (
    FUZZABLE,
    FuzzRun,
    RuleFailure,
    attach,
    detach,
    judge,
    select_rules,
)
from conformance.rules import CATALOG

BODY = {"model": "reference-ngram", "prompt": "Hi", "max_tokens": 3}
STREAM = {**BODY, "stream": True, "stream_options": {"include_usage": True}}


def run(profile_name: str = "openai", strict: bool = True) -> FuzzRun:
    chosen = settings(profile_name)
    return FuzzRun(chosen, select_rules(chosen, strict=strict), Caps(),
                   operations={"POST /v1/completions": "completions",
                               "POST /dedicated/v1/completions": "completions"})


def test_every_scan_rule_and_every_binding_is_registered_under_its_id() -> None:
    ids = {rule.id for rule in FUZZABLE}
    assert {rule.id for rule in CATALOG if rule.scan} <= ids
    assert {rule.id for rule in CATALOG if rule.fuzz} <= ids
    assert {rule.fuzz for rule in CATALOG if rule.fuzz} <= set(BINDERS)  # no unknown shape
    assert all(binder_for(CATALOG.get(i)) is not None for i in ids)
    assert set(CHECKS.get_all_names()) >= ids


def test_rules_that_need_several_exchanges_are_not_fuzzed() -> None:
    for rule_id in ("DET-001", "STOP-002", "INDICES-003", "FINISH-005", "ERRORS-006"):
        assert binder_for(CATALOG.get(rule_id)) is None


def test_select_rules_follows_level_profile_and_features() -> None:
    strict = {r.id for r in select_rules(settings("openai"), strict=True)}
    lenient = {r.id for r in select_rules(settings("openai"), strict=False)}
    assert "INDICES-004" in strict and "INDICES-004" not in lenient
    assert "FRIENDLI-002" not in strict
    unclaimed = settings("openai")
    unclaimed = type(unclaimed)(**{**unclaimed.__dict__, "features": frozenset()})
    assert "LOGPROBS-008" not in {r.id for r in select_rules(unclaimed, strict=True)}


def test_a_scan_rule_judges_one_response() -> None:
    rule = CATALOG.get("USAGE-001")
    good = sample(BODY, json_bytes(completion("abc", usage=(2, 3, 5))))
    bad = sample(BODY, json_bytes(completion("abc", usage=(2, 3, 6))))
    assert judge(rule, run(), good) is None
    violation = judge(rule, run(), bad)
    assert violation is not None and violation.actual == 6


def test_stream_rules_judge_one_stream() -> None:
    missing_done = sample(STREAM, sse(chunk(0, "a", "stop"), done=False),
                          content_type="text/event-stream")
    assert judge(CATALOG.get("SSE-005"), run(), missing_done) is not None
    no_usage = sample(STREAM, sse(chunk(0, "a", "stop")), content_type="text/event-stream")
    assert judge(CATALOG.get("USAGE-003"), run(), no_usage) is not None
    plain = {**STREAM, "stream_options": None}
    assert judge(CATALOG.get("USAGE-003"), run(), sample(plain, sse(chunk(0, "a", "stop")),
                                                         content_type="text/event-stream")) is None


def test_a_stream_labelled_json_is_still_read_as_a_stream() -> None:
    wrong = sample(STREAM, sse(chunk(0, "a", "stop")), content_type="application/json")
    assert wrong.exchange.is_sse
    assert judge(CATALOG.get("CONTENT-TYPE-001"), run(), wrong) is not None


def test_invalid_requests_are_judged_by_the_errors_rules() -> None:
    body = {**BODY, "temperature": 9}
    accepted = sample(body, json_bytes(completion("x")))
    assert judge(CATALOG.get("ERRORS-001"), run(), accepted) is not None
    crashed = sample(body, b"oops", status=500, content_type="text/plain")
    assert judge(CATALOG.get("ERRORS-002"), run(), crashed) is not None
    bare = sample(body, b'{"message": "no"}', status=400)
    assert judge(CATALOG.get("ERRORS-003"), run(), bare) is not None
    rate_limited = sample(body, b"{}", status=429)
    assert invalid(rate_limited) is None


def test_only_shapes_a_rule_can_judge_are_bound() -> None:
    answer = json_bytes(completion("x"))
    assert logprobs(sample({**BODY, "logprobs": 2}, answer)) is not None
    assert logprobs(sample({**BODY, "logprobs": 2, "stop": "."}, answer)) is None
    assert logprobs(sample({**BODY, "logprobs": 2, "echo": True}, answer)) is None
    assert echo_scored(sample({**BODY, "echo": True, "logprobs": 0}, answer)) is not None
    assert echo_scored(sample({**BODY, "prompt": "", "echo": True, "logprobs": 0}, answer)) is None
    assert stopped(sample({**BODY, "stop": "."}, answer)) is not None
    # vLLM keeps the matched stop string by design: the stop rules have nothing to judge
    ids = {"return_tokens_as_token_ids": True}  # vLLM's tokens as "token_id:N", by design
    assert logprobs(sample({**BODY, "logprobs": 2}, answer, profile_name="vllm")) is not None
    assert logprobs(sample({**BODY, "logprobs": 2, **ids}, answer, profile_name="vllm")) is None
    assert echo_scored(sample({**BODY, "echo": True, "logprobs": 0, **ids}, answer,
                              profile_name="vllm")) is None
    assert stopped(sample({**BODY, "stop": "."}, answer, profile_name="vllm")) is not None
    assert stopped(sample({**BODY, "stop": ".", "include_stop_str_in_output": True}, answer,
                          profile_name="vllm")) is None


def test_the_registered_check_raises_a_rule_failure() -> None:
    schema = schemathesis.openapi.from_dict(spec.profile_document("openai"))
    operation = schema["/v1/completions"]["POST"]
    case = operation.Case(body=BODY, media_type="application/json")
    answer = response(BODY, json_bytes(completion("x", usage=(1, 1, 3))))
    check = CHECKS.get_one("USAGE-001")
    assert check(None, answer, case) is None  # not a fuzz run's schema: nothing to judge
    attach(schema, run())
    try:
        with pytest.raises(RuleFailure) as caught:
            check(None, answer, case)
    finally:
        detach(schema)
    failure = caught.value
    assert failure.title.startswith("USAGE-001 ") and failure._unique_key == "USAGE-001"
    assert "Expected: 2" in failure.message and "Requirement (MUST)" in failure.message


def test_another_method_on_a_completions_path_is_judged_by_no_rule() -> None:
    """schemathesis sends OPTIONS (and other methods) to an operation's path; a server's CORS
    preflight answering 200 text/html is not a completion, and no completion rule judges it."""
    schema = schemathesis.openapi.from_dict(spec.profile_document("openai"))
    case = schema["/v1/completions"]["POST"].Case(body=BODY, media_type="application/json")
    preflight = response(BODY, b"<html></html>", content_type="text/html", method="OPTIONS")
    check = CHECKS.get_one("CONTENT-TYPE-002")
    attach(schema, run())
    try:
        assert check(None, preflight, case) is None
        with pytest.raises(RuleFailure):  # the same answer to the POST itself is judged
            check(None, response(BODY, b"<html></html>", content_type="text/html"), case)
    finally:
        detach(schema)


def json_bytes(value: object) -> bytes:
    import json

    return json.dumps(value).encode()


def test_integral_floats_count_as_integers() -> None:
    body = {**BODY, "n": 2.0}
    two = completion("a")
    two["choices"].append({**two["choices"][0], "index": 1})
    assert judge(CATALOG.get("INDICES-001"), run(), sample(body, json_bytes(two))) is None
    assert judge(CATALOG.get("INDICES-001"), run(), sample(body, json_bytes(completion("a")))
                 ) is not None


def test_a_rule_counts_the_answers_it_judged_and_no_others() -> None:
    fuzz = run()
    rule = CATALOG.get("USAGE-001")
    judge(rule, fuzz, sample(BODY, json_bytes(completion("abc", usage=(2, 3, 5)))))
    judge(rule, fuzz, sample(BODY, json_bytes(completion("abc", usage=(2, 3, 6)))))
    assert fuzz.judged == {"USAGE-001": 2}
    judge(rule, fuzz, sample(BODY, b"[" * 5000 + b"]" * 5000))  # nothing it can read
    assert fuzz.judged == {"USAGE-001": 2}


def test_a_rule_bound_to_one_of_its_two_exchanges_still_counts_what_it_judged() -> None:
    fuzz = run()  # PARAMS-007 reads length/short, then greedy/ns, which a fuzz sample lacks
    short = {**BODY, "max_tokens": 3}
    answer = completion("abc", usage=(2, 3, 5), finish_reason="length")
    assert judge(CATALOG.get("PARAMS-007"), fuzz, sample(short, json_bytes(answer))) is None
    assert fuzz.judged == {"PARAMS-007": 1}


def test_a_violation_keeps_no_frame_of_the_check() -> None:
    bad = sample(BODY, json_bytes(completion("abc", usage=(2, 3, 6))))
    violation = judge(CATALOG.get("USAGE-001"), run(), bad)
    assert violation is not None
    assert violation.__traceback__ is None and violation.__context__ is None
