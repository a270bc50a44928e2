"""The wire layer: request conversion and rendering, checked against the contract's schemas.

Renderers are fed hand-built engine results, so these tests pin the wire format on its own.
"""

from __future__ import annotations

import json

import pytest
from mock_live import MODEL

import spec
from mockserver import sse
from mockserver.contracts import builtin_contract
from mockserver.offline import offline_answer
from mockserver.validation import RequestValidator
from mockserver.wire import (
    Identity,
    Wire,
    WireOptions,
    build_request,
    completion_body,
    integral_numbers,
    stream_chunks,
    wire_of,
)
from reference_engine import (
    Choice,
    Completion,
    Event,
    FinishEvent,
    InvalidRequestError,
    LogprobEntry,
    TextEvent,
    UnsupportedParameterError,
    Usage,
    UsageEvent,
)
from reference_engine.sampling import SamplingParams

IDENTITY = Identity("cmpl-test", 1764400000, "reference-ngram", "fp_0123456789")
ENTRY = LogprobEntry(token=" a", logprob=-0.5, top={" a": -0.5, " b": -1.5}, offset=5)
ECHO_ENTRY = LogprobEntry(token="Hello", logprob=None, top=None, offset=0)
OPENAI = spec.get_profile("openai")
FRIENDLI = spec.get_profile("friendli")


def choice(index: int = 0, **overrides: object) -> Choice:
    fields: dict[str, object] = {
        "index": index, "text": " a b", "finish_reason": "length", "logprobs": None,
        "token_ids": (10, 11), "seed": 42, "completion_tokens": 2,
    }
    fields.update(overrides)
    return Choice(**fields)  # type: ignore[arg-type]


def events(*, logprobs: bool = False) -> list[Event]:
    entries = (ENTRY,) if logprobs else ()
    return [
        TextEvent(0, " a", 10, entries),
        TextEvent(1, " c", 12, entries),
        TextEvent(0, "", 11, ()),
        FinishEvent(0, "length", " b", entries, 42, (10, 11), 2),
        FinishEvent(1, "stop", "", (), 43, (12,), 1),
        UsageEvent(Usage(3, 3)),
    ]


# -- build_request ------------------------------------------------------------------------
def test_wire_forms_become_engine_keywords_and_null_means_default() -> None:
    """mockserver/wire is the one reader of request JSON: id-string logit_bias keys,
    ``[{"tokens": ...}]`` bad words and ``{"type": ...}`` formats become the engine's types."""
    request = build_request({
        "model": "m", "tokens": [1], "temperature": None, "top_k": 40,
        "bad_word_tokens": [{"tokens": [1, 2]}, {"tokens": [3]}],
        "response_format": {"type": "json_object"},
    }, wire="friendli")
    params = request.sampling
    assert params.temperature == 1.0 and params.top_k == 40
    assert params.bad_word_tokens == ((1, 2), (3,))
    assert params.response_format == "json_object" and params.json_object
    biased = build_request({"model": "m", "prompt": "x", "logit_bias": {"50256": -100, "7": 2.5}},
                           wire="openai").sampling
    assert dict(biased.logit_bias) == {7: 2.5, 50256: -100.0}
    with pytest.raises(InvalidRequestError, match="logit_bias keys") as info:
        build_request({"model": "m", "prompt": "x", "logit_bias": {"abc": 1}}, wire="openai")
    assert info.value.param == "logit_bias"
    clamped = build_request({"model": "m", "prompt": "x", "logit_bias": {"5": 200, "6": -300}},
                            wire="openai").sampling  # only vLLM's schema lets these through
    assert dict(clamped.logit_bias) == {5: 100.0, 6: -100.0}
    with pytest.raises(InvalidRequestError) as not_a_number:
        build_request({"model": "m", "prompt": "x", "logit_bias": {"5": "high"}}, wire="openai")
    assert not_a_number.value.param == "logit_bias"  # from the engine's typed error




@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("Hi", ("Hi",)),
        (["A", "B"], ("A", "B")),
        ([464, 1361], ((464, 1361),)),
        ([[1], [2, 3]], ((1,), (2, 3))),
    ],
)
def test_openai_prompt_shapes(prompt: object, expected: tuple[object, ...]) -> None:
    assert build_request({"model": "m", "prompt": prompt}, wire="openai").prompts == expected


def test_openai_defaults_and_conversions() -> None:
    request = build_request(
        {"model": "m", "prompt": "x", "max_tokens": None, "stop": "\n", "logit_bias": {"13": -100},
         "best_of": 3, "n": 2, "echo": True, "logprobs": 0, "seed": 7, "top_k": 5,
         "min_p": 0.1, "repetition_penalty": 1.2, "min_tokens": 2, "suffix": "!", "user": "u"},
        wire="openai",
    )
    assert request.max_tokens == 16
    assert request.stop == ("\n",)
    assert dict(request.sampling.logit_bias) == {13: -100.0}
    assert (request.best_of, request.n, request.echo, request.logprobs) == (3, 2, True, 0)
    assert (request.seed, request.sampling.top_k, request.sampling.min_tokens) == (7, 5, 2)


def test_openai_top_p_zero_keeps_the_top_token() -> None:
    request = build_request({"model": "m", "prompt": "x", "top_p": 0}, wire="openai")
    assert 0 < request.sampling.top_p < 1e-300


def test_friendli_fields() -> None:
    request = build_request(
        {"model": "m", "tokens": [1, 2], "stop": ["x"], "stop_tokens": [{"tokens": [5, 6]}],
         "bad_words": ["no"], "bad_word_tokens": [{"tokens": [7]}], "eos_token": [9],
         "seed": [1, 2], "n": 2, "max_total_tokens": 10, "min_total_tokens": 4,
         "forced_output_tokens": [3], "response_format": {"type": "json_object"},
         "xtc_threshold": 0.1, "xtc_probability": 0.5, "no_repeat_ngram": 3,
         "encoder_no_repeat_ngram": 1, "embedding_to_replace": [], "token_index_to_replace": None},
        wire="friendli",
    )
    assert request.prompts == ((1, 2),) and request.prompt_field == "tokens"
    assert request.stop_token_sequences == ((5, 6),)
    assert request.sampling.bad_word_tokens == ((7,),) and request.bad_words == ("no",)
    assert request.eos_token_ids == (9,) and request.seed == (1, 2)
    assert request.max_tokens is None and request.max_total_tokens == 10
    assert request.min_total_tokens == 4 and request.forced_output_tokens == (3,)
    assert request.sampling.response_format == "json_object"
    assert request.sampling.no_repeat_ngram == 3


def test_friendli_without_max_tokens_runs_to_the_context() -> None:
    assert build_request({"model": "m", "prompt": "x"}, wire="friendli").max_tokens is None


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("encoder_no_repeat_ngram", 2),
        ("encoder_repetition_penalty", 1.5),
        ("embedding_to_replace", [0.5]),
        ("token_index_to_replace", [0]),
    ],
)
def test_friendli_unsupported_fields(field: str, value: object) -> None:
    with pytest.raises(UnsupportedParameterError) as raised:
        build_request({"model": "m", "prompt": "x", field: value}, wire="friendli")
    assert raised.value.param == field


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"prompt": []}, "prompt"),
        ({"prompt": [1, "a"]}, "prompt"),
        ({"prompt": "x", "n": "2"}, "n"),
        ({"prompt": "x", "echo": 1}, "echo"),
        ({"prompt": "x", "temperature": 9}, "temperature"),
        ({"prompt": "x", "logit_bias": {"a": 1}}, "logit_bias"),
        ({"prompt": "x", "seed": "1"}, "seed"),
        ({"prompt": "x", "stop": [1]}, "stop"),
    ],
)
def test_build_request_errors_name_the_field(body: dict[str, object], param: str) -> None:
    with pytest.raises(InvalidRequestError) as raised:
        build_request({"model": "m", **body}, wire="openai")
    assert raised.value.param == param


def test_integral_floats_are_integers() -> None:
    assert integral_numbers({"n": 2.0, "prompt": [1.0, 2], "t": 0.5}) == {
        "n": 2, "prompt": [1, 2], "t": 0.5}


@pytest.mark.parametrize("wire", ["openai", "friendli"])
def test_validation_turns_integral_floats_into_the_ints_build_request_takes(
    wire: Wire,
) -> None:
    validator = RequestValidator(builtin_contract(wire), model_id=MODEL)
    valid = validator.validate({"model": MODEL, "prompt": "x", "n": 2.0, "seed": 3.0,
                                "max_tokens": 4.0, "temperature": 0.5})
    assert json.dumps(valid) == json.dumps({"model": MODEL, "prompt": "x", "n": 2, "seed": 3,
                                            "max_tokens": 4, "temperature": 0.5})
    request = build_request(valid, wire=validator.wire)
    assert (request.n, request.seed, request.max_tokens) == (2, 3, 4)
    assert type(request.seed) is int


def test_build_request_takes_validated_bodies_only() -> None:
    # Integral floats are made ints once, by validation; here a float is not an integer.
    for field in ("n", "seed"):
        with pytest.raises(InvalidRequestError) as raised:
            build_request({"model": "m", "prompt": "x", field: 2.0}, wire="openai")
        assert raised.value.param == field


def test_unknown_profile_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown profile"):
        wire_of("anthropic")


def test_unknown_wire_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown wire"):
        build_request({"model": "m", "prompt": "x"}, wire="anthropic")  # type: ignore[arg-type]


def test_wire_options() -> None:
    options = WireOptions.from_body(
        {"stream": True, "stream_options": {"include_usage": True}, "logprobs": 0, "suffix": "!"},
        wire="openai",
    )
    assert options == WireOptions(stream=True, include_usage=True, logprobs=True, suffix="!")
    assert not WireOptions.from_body({"stream_options": {"include_usage": True}},
                                     wire="openai").include_usage
    assert WireOptions.from_body({"suffix": "!"}, wire="friendli").suffix is None


# -- completion_body ----------------------------------------------------------------------


def test_openai_completion_body() -> None:
    completion = Completion(
        (choice(0, logprobs=(ECHO_ENTRY, ENTRY)), choice(1, finish_reason="stop")), Usage(3, 4)
    )
    body = completion_body(completion, IDENTITY, wire="openai", suffix="!")
    OPENAI.validator("response").validate(body)
    assert list(body) == ["id", "object", "created", "model", "system_fingerprint", "choices",
                          "usage"]
    assert body["choices"][0] == {
        "index": 0, "text": " a b!", "finish_reason": "length",
        "logprobs": {"tokens": ["Hello", " a"], "token_logprobs": [None, -0.5],
                     "top_logprobs": [None, {" a": -0.5, " b": -1.5}], "text_offset": [0, 5]},
    }
    assert body["choices"][1]["logprobs"] is None
    assert body["usage"] == {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}


def test_friendli_completion_body() -> None:
    completion = Completion((choice(0), choice(1, logprobs=(ENTRY,))), Usage(3, 4))
    body = completion_body(completion, IDENTITY, wire="friendli")
    FRIENDLI.validator("response").validate(body)
    assert "created" not in body and "system_fingerprint" not in body
    assert body["choices"][0] == {"index": 0, "seed": 42, "text": " a b", "tokens": [10, 11],
                                  "finish_reason": "length"}
    assert body["choices"][1]["logprobs"]["tokens"] == [" a"]


# -- stream_chunks ------------------------------------------------------------------------


@pytest.mark.parametrize("include_usage", [True, False])
def test_openai_chunks(include_usage: bool) -> None:
    chunks = list(stream_chunks(events(), IDENTITY, wire="openai", include_usage=include_usage))
    for chunk in chunks:
        if chunk["choices"]:
            OPENAI.validator("chunk").validate(chunk)
            assert ("usage" in chunk) is include_usage
            assert chunk.get("usage") is None
    assert [c["choices"][0]["text"] for c in chunks[:5]] == [" a", " c", "", " b", ""]
    assert [c["choices"][0]["finish_reason"] for c in chunks[:5]] == [
        None, None, None, "length", "stop"]
    if include_usage:
        OPENAI.validator("usage_chunk").validate(chunks[-1])
        assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] == 6
    else:
        assert len(chunks) == 5
    stream = [*chunks, sse.DONE]
    OPENAI.validator("event_stream").validate(stream)


def test_openai_chunks_logprobs_and_suffix() -> None:
    chunks = list(stream_chunks(events(logprobs=True), IDENTITY, wire="openai",
                                include_usage=False, logprobs=True, suffix="!"))
    assert chunks[0]["choices"][0]["logprobs"]["tokens"] == [" a"]
    assert chunks[2]["choices"][0]["logprobs"] == {
        "tokens": [], "token_logprobs": [], "top_logprobs": [], "text_offset": []}
    assert chunks[3]["choices"][0]["text"] == " b!"


def test_friendli_chunks() -> None:
    chunks = list(stream_chunks(events(), IDENTITY, wire="friendli", include_usage=True))
    FRIENDLI.validator("event_stream").validate([*chunks, sse.DONE])
    assert list(chunks[0]) == ["id", "model", "object", "choices", "created"]
    assert chunks[0]["choices"][0] == {"index": 0, "text": " a", "token": 10,
                                       "finish_reason": None, "logprobs": None}
    assert chunks[3]["choices"][0] == {"index": 0, "text": " b", "finish_reason": "length",
                                       "logprobs": None}
    assert all("usage" not in c for c in chunks[:-1])
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["prompt_tokens"] == 3


def test_chunks_are_lazy() -> None:
    def endless():  # type: ignore[no-untyped-def]
        while True:
            yield TextEvent(0, "x", 1, ())

    chunks = stream_chunks(endless(), IDENTITY, wire="openai", include_usage=False)
    assert next(chunks)["choices"][0]["text"] == "x"


# -- offline_answer (python -m mockserver.render) -----------------------------------------


def test_offline_answer_matches_the_engine() -> None:
    body = {"model": "reference-ngram", "prompt": "The Python", "max_tokens": 3,
            "temperature": 0}
    text = offline_answer(body, profile_name="openai", stream=False)
    streamed = offline_answer(body, profile_name="openai", stream=True)
    events_ = [line[len("data: "):] for line in streamed.split("\n\n") if line]
    assert events_[-1] == "[DONE]"
    assert '"id":"cmpl-reference"' in text and '"created":0' in text


def test_offline_answer_reports_invalid_requests() -> None:
    with pytest.raises(ValueError, match=r"400 .*param: temperature"):
        offline_answer({"model": "reference-ngram", "prompt": "x", "temperature": 3},
                   profile_name="openai", stream=False)
    with pytest.raises(ValueError, match="422"):
        offline_answer({"model": "reference-ngram"}, profile_name="friendli", stream=False)


def test_sampling_params_are_shared_types() -> None:
    assert isinstance(build_request({"model": "m", "prompt": "x"}, wire="openai").sampling,
                      SamplingParams)


def test_render_command_prints_what_the_mock_would_send() -> None:
    """``python -m mockserver.render`` (the engine has no command: it knows no JSON)."""
    import json
    import subprocess
    import sys

    body = '{"model": "reference-ngram", "prompt": "The Python", "max_tokens": 3, "seed": 1}'
    done = subprocess.run([sys.executable, "-m", "mockserver.render", body], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["usage"]["completion_tokens"] == 3
    bad = subprocess.run([sys.executable, "-m", "mockserver.render", "{oops"],
                         capture_output=True, text=True, timeout=60, check=False)
    assert bad.returncode == 2 and "not valid JSON" in bad.stderr
