"""Checks over hand-built exchanges: each defect fails its own rule and SKIPs the rest."""

from __future__ import annotations

import json

from harness_support import MODEL, chunk, frames, json_exchange, rule, sse_exchange

import spec
from conformance.model import Level, Rule, SourceKind
from conformance.probes import ProbeOutcome
from conformance.run.runner import evaluate
from conformance.run.settings import Settings
from conformance.transport import Exchange

PROFILE = spec.get_profile("openai")
SETTINGS = Settings("http://x.test/v1", PROFILE, MODEL, PROFILE.features)
STREAM_BODY = {"model": MODEL, "prompt": "p", "stream": True, "max_tokens": 16}
PLAIN_BODY = {"model": MODEL, "prompt": "p", "max_tokens": 16}


def greedy(stream: Exchange, plain: Exchange | None = None) -> dict[str, ProbeOutcome]:
    plain = plain or json_exchange(
        {"id": "c", "object": "text_completion", "created": 1, "model": MODEL,
         "choices": [{"index": 0, "text": "ab", "logprobs": None, "finish_reason": "length"}],
         "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}},
        request_body=PLAIN_BODY,
    )
    outcome = ProbeOutcome(
        "greedy", exchanges={"s": stream, "ns": plain},
        requests={"s": STREAM_BODY, "ns": PLAIN_BODY},
    )
    return {"greedy": outcome}


def verdict(rule_id: str, outcomes: dict[str, ProbeOutcome]) -> str:
    return evaluate(rule(rule_id), SETTINGS, outcomes, {}).verdict.value


def stream(raw: bytes) -> Exchange:
    return sse_exchange(raw, request_body=STREAM_BODY)


GOOD = frames(chunk(0, "a"), chunk(0, "b", "length"))


def test_a_good_stream_passes_the_stream_rules() -> None:
    outcomes = greedy(stream(GOOD))
    for rule_id in ("SSE-001", "SSE-002", "SSE-003", "SSE-004", "SSE-005", "SSE-006",
                    "SSE-007", "FINISH-001", "FINISH-002", "FINISH-004", "DET-001",
                    "IDENTITY-001", "IDENTITY-004", "SCHEMA-001"):
        assert verdict(rule_id, outcomes) == "PASS", rule_id


def test_merged_events_fail_sse_003_only() -> None:
    merged = GOOD.replace(b"\n\ndata: {", b"\ndata: {", 1)
    outcomes = greedy(stream(merged))
    assert verdict("SSE-003", outcomes) == "FAIL"
    assert verdict("SSE-004", outcomes) == "PASS"
    assert verdict("DET-001", outcomes) == "SKIP"


def test_split_json_fails_sse_004_only() -> None:
    data = json.dumps(chunk(0, "a")).encode()
    raw = b"data: " + data[:10] + b"\n\ndata: " + data[10:] + b"\n\n" + frames(
        chunk(0, "b", "length"))
    outcomes = greedy(stream(raw))
    assert verdict("SSE-004", outcomes) == "FAIL"
    assert verdict("SSE-003", outcomes) == "PASS"
    assert verdict("FINISH-002", outcomes) == "SKIP"  # unsound streams are not judged


def test_json_split_at_whitespace_is_valid() -> None:
    data = json.dumps(chunk(0, "a"), separators=(",", ":"))
    cut = data.index(",") + 1
    raw = f"data:{data[:cut]}\r\ndata:{data[cut:]}\r\n\r\n".encode() + frames(
        chunk(0, "b", "length"))
    outcomes = greedy(stream(raw))
    for rule_id in ("SSE-003", "SSE-004", "DET-001", "FINISH-002"):
        assert verdict(rule_id, outcomes) == "PASS", rule_id


def test_empty_string_finish_fails_finish_001_only() -> None:
    outcomes = greedy(stream(frames(chunk(0, "a", ""), chunk(0, "b", "length"))))
    assert verdict("FINISH-001", outcomes) == "FAIL"
    for rule_id in ("FINISH-002", "FINISH-003", "FINISH-004", "SCHEMA-001", "DET-001"):
        assert verdict(rule_id, outcomes) == "PASS", rule_id


def test_openais_repeated_length_finish_is_valid_and_judged() -> None:
    """OpenAI repeats a length finish on one more chunk with empty text (issue 49)."""
    repeated = frames(chunk(0, "a"), chunk(0, "b", "length"), chunk(0, "", "length"))
    outcomes = greedy(stream(repeated))
    for rule_id in ("FINISH-002", "FINISH-004", "DET-001"):
        assert verdict(rule_id, outcomes) == "PASS", rule_id


def test_a_finish_that_changes_its_reason_is_finish_002s_alone() -> None:
    changed = frames(chunk(0, "a"), chunk(0, "b", "length"), chunk(0, "", "stop"))
    outcomes = greedy(stream(changed))
    assert verdict("FINISH-002", outcomes) == "FAIL"
    assert verdict("FINISH-004", outcomes) == "PASS"
    assert verdict("DET-001", outcomes) == "SKIP"


def test_a_repeated_finish_with_text_fails_finish_002() -> None:
    texted = frames(chunk(0, "a"), chunk(0, "b", "length"), chunk(0, "c", "length"))
    outcomes = greedy(stream(texted))
    assert verdict("FINISH-002", outcomes) == "FAIL"
    assert verdict("DET-001", outcomes) == "SKIP"


def test_text_after_finish_is_finish_004s() -> None:
    late = frames(chunk(0, "a", "length"), chunk(0, "b"))
    outcomes = greedy(stream(late))
    assert verdict("FINISH-004", outcomes) == "FAIL"
    assert verdict("FINISH-002", outcomes) == "PASS"


def test_missing_done_and_unterminated_event() -> None:
    assert verdict("SSE-005", greedy(stream(GOOD[: -len(b"data: [DONE]\n\n")]))) == "FAIL"
    unterminated = greedy(stream(GOOD[:-1]))
    assert verdict("SSE-002", unterminated) == "FAIL"
    assert verdict("SSE-005", unterminated) == "PASS"  # the [DONE] was sent, unterminated


def test_the_schema_rule_leaves_owned_fields_to_their_rules() -> None:
    wrong = chunk(0, "b", "eos")
    wrong["object"] = "text.completion"
    outcomes = greedy(stream(frames(chunk(0, "a"), wrong)))
    assert verdict("SCHEMA-001", outcomes) == "PASS"
    assert verdict("FINISH-003", outcomes) == "FAIL"
    assert verdict("IDENTITY-004", outcomes) == "FAIL"
    broken = chunk(0, "a")
    broken["created"] = "yesterday"
    outcomes = greedy(stream(frames(broken, chunk(0, "b", "length"))))
    result = evaluate(rule("SCHEMA-001"), SETTINGS, outcomes, {})
    assert result.verdict.value == "FAIL" and result.finding and result.finding.path == "created"


def test_a_check_reading_an_undeclared_probe_is_an_error() -> None:
    def sneaky(ctx: object) -> None:
        ctx.outcome("stop")  # type: ignore[attr-defined]

    bad = Rule("TEST-001", Level.MUST, "t", "r", "c", SourceKind.SPEC, sneaky, probes=("greedy",))
    result = evaluate(bad, SETTINGS, greedy(stream(GOOD)), {})
    assert result.verdict.value == "ERROR" and "does not declare" in result.message


def test_a_feature_not_claimed_skips() -> None:
    settings = Settings("http://x.test/v1", PROFILE, MODEL, frozenset())
    result = evaluate(rule("USAGE-003"), settings, greedy(stream(GOOD)), {})
    assert result.verdict.value == "SKIP" and "include_usage" in result.message


def test_failures_carry_a_curl_command_without_secrets() -> None:
    outcomes = greedy(stream(frames(chunk(0, "a", ""), chunk(0, "b", "length"))))
    result = evaluate(rule("FINISH-001"), SETTINGS, outcomes, {})
    assert result.finding is not None and result.finding.curl is not None
    assert result.finding.curl.startswith("curl -sS -N ")
    assert result.finding.evidence and '"finish_reason": ""' in result.finding.evidence


def _completion(text: str, finish: str, *, logprobs: dict | None = None,
                request_body: dict | None = None) -> Exchange:
    return json_exchange(
        {"id": "c", "object": "text_completion", "created": 1, "model": MODEL,
         "choices": [{"index": 0, "text": text, "logprobs": logprobs, "finish_reason": finish}],
         "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}},
        request_body=request_body or PLAIN_BODY,
    )


def test_a_stop_string_appended_after_end_of_text_is_stop_001s() -> None:
    base, stop, never = "one two three", "two", "e\u2603\u2603"
    outcome = ProbeOutcome(
        "stop",
        exchanges={"baseline": _completion(base, "stop"), "ns": _completion("one ", "stop"),
                   "never": _completion(base + never, "stop")},  # ended at end-of-text
        requests=dict.fromkeys(("baseline", "ns", "never"), PLAIN_BODY),
        notes={"stop": stop, "expected": "one ", "baseline_text": base, "never": never},
    )
    outcomes = {"stop": outcome}
    assert verdict("STOP-001", outcomes) == "FAIL"
    assert verdict("STOP-002", outcomes) == "SKIP"


def _echo(tokens: list[str], text: str) -> dict[str, ProbeOutcome]:
    logprobs = {"tokens": tokens, "token_logprobs": [-0.5] * len(tokens),
                "top_logprobs": [{t: -0.5} for t in tokens],
                "text_offset": [0] * len(tokens)}
    request = {**PLAIN_BODY, "prompt": "Hi", "echo": True, "logprobs": 1}
    exchange = _completion(text, "length", logprobs=logprobs, request_body=request)
    return {"echo": ProbeOutcome("echo", exchanges={"ns": exchange}, requests={"ns": request},
                                 notes={"prompt": "Hi"})}


def test_echo_logprobs_without_prompt_entries_are_echo_003s() -> None:
    outcomes = _echo([" there", "!"], "Hi there!")
    assert verdict("ECHO-003", outcomes) == "FAIL"
    assert verdict("ECHO-002", outcomes) == "SKIP"
    scored = _echo(["Hi", " there", "!"], "Hi there!")
    assert verdict("ECHO-003", scored) == "PASS"
    assert verdict("ECHO-002", scored) == "FAIL"  # token_logprobs[0] is not null


def test_echo_logprobs_that_spell_neither_text_are_logprobs_004s() -> None:
    garbled = _echo(["Hi", " the", "re?"], "Hi there!")
    assert verdict("LOGPROBS-004", garbled) == "FAIL"
    assert verdict("ECHO-003", garbled) == "SKIP"  # it names LOGPROBS-004 as the judge
    assert verdict("LOGPROBS-004", _echo(["Hi", " there", "!"], "Hi there!")) == "PASS"
    assert verdict("LOGPROBS-004", _echo([" there", "!"], "Hi there!")) == "PASS"  # ECHO-003's


def test_a_broken_stream_does_not_hide_the_non_streamed_echo() -> None:
    """ECHO-001 judges the non-streamed twin when the echo stream cannot be assembled."""
    request = {**PLAIN_BODY, "prompt": "Hi", "echo": True}
    broken = stream(frames(chunk(0, "Hi there")))  # no finish chunk: FINISH-002's defect

    def outcomes(text: str) -> dict[str, ProbeOutcome]:
        exchanges = {"ns": _completion(text, "length", request_body=request), "s": broken}
        requests = {"ns": request, "s": {**request, "stream": True}}
        return {"echo": ProbeOutcome("echo", exchanges=exchanges, requests=requests,
                                     notes={"prompt": "Hi"})}

    assert verdict("ECHO-001", outcomes(" there")) == "FAIL"
    assert verdict("ECHO-001", outcomes("Hi there")) == "PASS"


def test_a_leading_space_on_echo_tokens_is_logprobs_004s_alone() -> None:
    """A SentencePiece tokenizer's dummy prefix (" Hi" for "Hi"): the spelling is LOGPROBS-004's
    defect; the echo rules still judge the prompt entries."""
    prefixed = _echo([" Hi", " there", "!"], "Hi there!")
    assert verdict("LOGPROBS-004", prefixed) == "FAIL"
    assert verdict("ECHO-003", prefixed) == "PASS"
    assert verdict("ECHO-002", prefixed) == "FAIL"  # token_logprobs[0] is not null


def _forced(tokens: list[str], token: str | None) -> dict[str, ProbeOutcome]:
    logprobs = {"tokens": tokens, "token_logprobs": [-0.1] * len(tokens),
                "top_logprobs": [{t: -0.1} for t in tokens], "text_offset": [0] * len(tokens)}
    exchange = _completion("".join(tokens), "length", logprobs=logprobs)
    return {"logit-bias": ProbeOutcome(
        "logit-bias", exchanges={"force": exchange}, requests={"force": PLAIN_BODY},
        notes={"forced": {"id": "300", "token": token}},
    )}


def test_a_forced_id_of_unknown_text_must_repeat_one_token() -> None:
    """Without a decoded vocabulary (no token-id prompts), +100 on id 300 is still judged."""
    assert verdict("PARAMS-003", _forced([" ok", " ok", " ok"], None)) == "PASS"
    assert verdict("PARAMS-003", _forced([" The", " quick", " fox"], None)) == "FAIL"
    assert verdict("PARAMS-003", _forced([" ok", " ok"], " no")) == "FAIL"


def test_stop_001_judges_a_request_without_the_probes_oracle() -> None:
    """As the fuzzer files it: only the request's stop strings and the answer, no notes."""
    request = {**PLAIN_BODY, "stop": ["e", " the"]}

    def outcomes(text: str) -> dict[str, ProbeOutcome]:
        exchange = _completion(text, "stop", request_body=request)
        return {"stop": ProbeOutcome("stop", exchanges={"ns": exchange}, requests={"ns": request})}

    assert verdict("STOP-001", outcomes("A list is th")) == "PASS"
    assert verdict("STOP-001", outcomes("A list is the")) == "FAIL"


def _broken(status: int | None, body: bytes = b"") -> Exchange:
    """A non-streamed answer whose connection the server broke (before or after the status)."""
    from dataclasses import replace

    from conformance.transport import Termination

    return replace(json_exchange({}, request_body=PLAIN_BODY), status=status, body=body,
                   termination=Termination.CONNECTION_ERROR, error="connection reset by peer")


def test_a_connection_the_server_breaks_fails_errors_008_and_errors_nothing() -> None:
    """A reset before the answer, or a body cut mid-way, is the server's defect: ERRORS-008
    FAILs, and the rules built on that answer SKIP (prerequisite broken), never ERROR."""
    for exchange in (_broken(None), _broken(200, b'{"id": "c", "choi')):
        outcomes = greedy(stream(GOOD), plain=exchange)
        assert verdict("ERRORS-008", outcomes) == "FAIL"
        assert verdict("DET-001", outcomes) == "SKIP"
        result = evaluate(rule("USAGE-010"), SETTINGS, outcomes, {})
        assert result.verdict.value == "SKIP" and "ERRORS-008" in result.message


def _answer(text: str, usage: dict) -> Exchange:
    return json_exchange(
        {"id": "c", "object": "text_completion", "created": 1, "model": MODEL,
         "choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": "stop"}],
         "usage": usage},
        request_body=PLAIN_BODY,
    )


def test_openais_empty_answer_may_leave_completion_tokens_out() -> None:
    """OpenAI's usage of an answer with no generated text (issue 49): no completion_tokens."""
    outcomes = greedy(stream(GOOD), _answer("", {"prompt_tokens": 5, "total_tokens": 5}))
    for rule_id in ("SCHEMA-001", "USAGE-001", "USAGE-012"):
        assert verdict(rule_id, outcomes) == "PASS", rule_id


def test_completion_tokens_left_out_of_generated_text_is_usage_012s() -> None:
    for usage in ({"prompt_tokens": 5, "total_tokens": 7}, {"prompt_tokens": 5, "total_tokens": 5}):
        outcomes = greedy(stream(GOOD), _answer("ab", usage))
        assert verdict("USAGE-012", outcomes) == "NON_STRICT", usage
        assert verdict("SCHEMA-001", outcomes) == "PASS"
    outcomes = greedy(stream(GOOD), _answer("ab", {"prompt_tokens": 5, "total_tokens": 7}))
    assert verdict("USAGE-001", outcomes) == "PASS"  # not read as 0: USAGE-012's defect alone


def _top_entries(tops: list[dict[str, float]]) -> dict[str, ProbeOutcome]:
    tokens = [next(iter(top)) for top in tops]
    chosen = [top[t] for t, top in zip(tokens, tops, strict=True)]
    logprobs = {"tokens": tokens, "token_logprobs": chosen,
                "top_logprobs": tops,
                "text_offset": [1 + len("".join(tokens[:i])) for i in range(len(tokens))]}
    request = {**PLAIN_BODY, "logprobs": 3}
    exchange = _completion("".join(tokens), "length", logprobs=logprobs, request_body=request)
    return {"logprobs": ProbeOutcome("logprobs", exchanges={"ln": exchange},
                                     requests={"ln": request}, notes={"prompt": "p", "top": 3})}


def test_a_short_top_logprobs_entry_is_a_violation_unless_its_keys_collapsed() -> None:
    """Alternatives that decode to no text of their own (split bytes of one character) share
    the key "\ufffd" or "" in a JSON object: vLLM's entries come short that way, by construction."""
    full = {" a": -0.1, " b": -2.0, " c": -3.0}
    assert verdict("LOGPROBS-006", _top_entries([full, full])) == "PASS"
    assert verdict("LOGPROBS-006", _top_entries([full, {" a": -0.1, " b": -2.0}])) == "FAIL"
    collapsed = {" a": -0.1, "\ufffd": -2.0}
    assert verdict("LOGPROBS-006", _top_entries([full, collapsed])) == "PASS"
    assert verdict("LOGPROBS-006", _top_entries([full, {" a": -0.1, "": -2.0}])) == "PASS"
    too_many = {**full, " d": -4.0, " e": -5.0}
    assert verdict("LOGPROBS-006", _top_entries([full, too_many])) == "FAIL"



def test_a_chosen_token_sharing_its_key_may_carry_another_alikes_logprob() -> None:
    """Two byte tokens that each decode to "" share one key: the entry's value may be the
    alternative's (vLLM, LOGPROBS-006's collapse), but the key must be there."""
    def outcomes(tokens: list[str]) -> dict[str, ProbeOutcome]:
        logprobs = {"tokens": tokens, "token_logprobs": [-0.1, -8.0],
                    "top_logprobs": [{" a": -0.1, " b": -2.0}, {" a": -0.5, "": -3.0}],
                    "text_offset": [1, 3]}
        request = {**PLAIN_BODY, "logprobs": 2}
        exchange = _completion("".join(tokens), "length", logprobs=logprobs,
                               request_body=request)
        return {"logprobs": ProbeOutcome("logprobs", exchanges={"ln": exchange},
                                         requests={"ln": request},
                                         notes={"prompt": "p", "top": 2})}

    assert verdict("LOGPROBS-007", outcomes([" a", ""])) == "PASS"
    assert verdict("LOGPROBS-007", outcomes([" a", " z"])) == "FAIL"
