"""What random requests seldom show, the fuzzer aims at: stop strings taken from what the server
wrote (a stream's text judged by STOP-001) and ``n > 1`` at temperature 1, mostly seeded (judged
by PARAMS-004 where the logprobs show equal choices cannot be chance)."""

from __future__ import annotations

import json

import pytest
from fuzz_support import chunk, completion, found_rules, run_cli, sample, settings, sse
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings

import spec
from conformance.fuzz.bodies import Caps
from conformance.fuzz.checks import FuzzRun, judge, select_rules
from conformance.fuzz.produced import KNOWN_TOKENS, Produced, baseline_body
from conformance.fuzz.shrink import choices_of, reductions
from conformance.rules import CATALOG
from conformance.strategies import independent_samples, stop_pieces, stop_requests
from conformance.target.embedded import EmbeddedMock

STOP = CATALOG.get("STOP-001")
INDEPENDENT = CATALOG.get("PARAMS-004")
TOKEN_PROMPT = {"model": "reference-ngram", "prompt": KNOWN_TOKENS, "max_tokens": 4,
                "stop": ["list"], "stream": True}
SAMPLED = {"model": "reference-ngram", "prompt": "Hi", "max_tokens": 4, "n": 2,
           "temperature": 1.0, "seed": 7, "logprobs": 0}


def run() -> FuzzRun:
    chosen = settings("openai")
    return FuzzRun(chosen, select_rules(chosen, strict=False), Caps())


def as_json(value: object) -> bytes:
    return json.dumps(value).encode()


def test_stop_strings_come_from_what_the_server_wrote() -> None:
    pieces = stop_pieces(['The list of" | "R'])
    assert {" list", ' of"', "The", "l", "R", '"', " |"} <= set(pieces)
    assert all(piece.strip() for piece in pieces)
    with pytest.raises(ValueError, match="texts"):
        stop_pieces([3])  # type: ignore[list-item]


def test_the_first_greedy_request_echoes_a_token_prompt_where_claimed() -> None:
    body, produced = baseline_body(settings("openai"), 16)
    assert body["prompt"] == KNOWN_TOKENS and body["echo"] is True and body["temperature"] == 0
    body, produced = baseline_body(settings("friendli"), 16)
    assert "echo" not in body and produced.field == "tokens" and body["tokens"] == KNOWN_TOKENS


@hypothesis_settings(max_examples=40, deadline=None, database=None,
                     suppress_health_check=list(HealthCheck))
@given(stop_requests(spec.get_profile("openai"), texts=["The list of things"],
                     prompt=KNOWN_TOKENS))
def test_stop_requests_are_greedy_with_a_stop_string(body: dict) -> None:
    assert body["temperature"] == 0 and body["stop"] and "echo" not in body


@hypothesis_settings(max_examples=40, deadline=None, database=None,
                     suppress_health_check=list(HealthCheck))
@given(independent_samples(spec.get_profile("openai"), max_n=3))
def test_independent_samples_are_sampled_n_choices(body: dict) -> None:
    assert body["temperature"] == 1.0 and 2 <= body["n"] <= 3 and "stream" not in body


def test_a_stream_holding_its_stop_string_fails_stop_001() -> None:
    leaked = sample(TOKEN_PROMPT, sse(chunk(0, "The list"), chunk(0, " of", "stop")),
                    content_type="text/event-stream")
    violation = judge(STOP, run(), leaked)
    assert violation is not None and violation.path == "choices[0].text"
    clean = sample(TOKEN_PROMPT, sse(chunk(0, "The "), chunk(0, "", "stop")),
                   content_type="text/event-stream")
    assert judge(STOP, run(), clean) is None
    echoed = sample({**TOKEN_PROMPT, "echo": True},
                    sse(chunk(0, "The list"), chunk(0, " of", "stop")),
                    content_type="text/event-stream")
    assert judge(STOP, run(), echoed) is None  # echo's text was not generated


def _choices(text: str, logprob: float) -> dict:
    body = completion(text)
    lp = {"tokens": [text], "token_logprobs": [logprob], "top_logprobs": [{text: logprob}],
          "text_offset": [0]}
    body["choices"] = [{"index": i, "text": text, "logprobs": lp, "finish_reason": "length"}
                       for i in range(2)]
    return body


def test_equal_sampled_choices_fail_params_004_only_where_chance_is_excluded() -> None:
    unlikely = sample(SAMPLED, as_json(_choices(" a b c d", -30.0)))
    violation = judge(INDEPENDENT, run(), unlikely)
    assert violation is not None and "twice" not in violation.message
    assert judge(INDEPENDENT, run(), sample(SAMPLED, as_json(_choices(" the", -0.5)))) is None
    truncated = {**SAMPLED, "top_p": 0.5}
    assert judge(INDEPENDENT, run(), sample(truncated, as_json(_choices(" a", -30.0)))) is None
    stopped = {**SAMPLED, "stop": ["x"]}
    assert judge(INDEPENDENT, run(), sample(stopped, as_json(_choices(" a", -30.0)))) is None


def test_shrinking_keeps_stop_strings_whole() -> None:
    body = {"prompt": "Hello there", "stop": [" list", " of"], "max_tokens": 5}
    assert choices_of(body) == [True, 11, True, 2, True, True]

    @hypothesis_settings(max_examples=60, deadline=None, database=None,
                         suppress_health_check=list(HealthCheck))
    @given(reductions(body))
    def check(smaller: dict) -> None:
        assert all(stop in (" list", " of") for stop in smaller.get("stop", []))

    check()


@pytest.mark.parametrize(("fault", "rule"), [("prompt-leak-stream", "STOP-001"),
                                             ("seeded-n-identical", "PARAMS-004")])
def test_the_fuzzer_finds_stop_and_seed_faults(mock: EmbeddedMock, fault: str, rule: str,
                                               tmp_path) -> None:
    report = tmp_path / "report.json"
    status, out, err = run_cli([
        "fuzz", "--base-url", mock.openai_url, "--model", "reference-ngram", "--max-examples",
        "100", "--phases", "fuzzing", "--no-shrink", "--seed", "1", "--workers", "1", "-q",
        "--header", f"X-Mock-Fault: {fault}", "--json", str(report)])
    assert status == 1, out + err
    assert rule in found_rules(json.loads(report.read_text())), out


def test_produced_text_makes_stop_strings() -> None:
    assert Produced([1], "The list").texts == ("The list",) and Produced([1]).texts == ()
