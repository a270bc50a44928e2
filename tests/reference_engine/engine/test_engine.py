"""The engine's observable contract: determinism, stream == non-stream, logprobs, stops."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from reference_engine import (
    ContextLengthError,
    Engine,
    FinishEvent,
    GenerationRequest,
    InvalidRequestError,
    SamplingParams,
    TextEvent,
    TokenIdOutOfRangeError,
    UsageEvent,
)
from reference_engine.tokenizer import display_to_bytes

ENGINE = Engine()
GREEDY = SamplingParams(temperature=0.0)


def complete(**kwargs: object):  # type: ignore[no-untyped-def]
    kwargs.setdefault("prompts", ("The Python language",))
    return ENGINE.complete(GenerationRequest(**kwargs))  # type: ignore[arg-type]


def streamed(**kwargs: object) -> dict[int, tuple[str, list]]:
    kwargs.setdefault("prompts", ("The Python language",))
    out: dict[int, tuple[str, list]] = {}
    for event in ENGINE.stream(GenerationRequest(**kwargs)):  # type: ignore[arg-type]
        if isinstance(event, (TextEvent, FinishEvent)):
            text, entries = out.get(event.index, ("", []))
            out[event.index] = (text + event.text, entries + list(event.logprobs))
    return out


CASES = [
    {"seed": 1, "max_tokens": 40},
    {"seed": 2, "max_tokens": 40, "n": 3, "logprobs": 3, "echo": True},
    {"sampling": GREEDY, "max_tokens": 30, "stop": (" the", "\n")},
    {"seed": 3, "max_tokens": 50, "prompts": ("Hello", "Lists are"), "n": 2, "logprobs": 0},
    {"seed": 4, "max_tokens": 40, "sampling": SamplingParams(temperature=0.7, top_p=0.9,
                                                              presence_penalty=0.5)},
]


@pytest.mark.parametrize("kwargs", CASES)
def test_stream_joins_to_the_non_streamed_result(kwargs: dict) -> None:
    completion = complete(**kwargs)
    stream = streamed(**kwargs)
    assert sorted(stream) == [c.index for c in completion.choices]
    for choice in completion.choices:
        text, entries = stream[choice.index]
        assert text == choice.text
        if choice.logprobs is not None:
            assert tuple(entries) == choice.logprobs


def test_stream_ends_with_usage_equal_to_the_non_streamed_usage() -> None:
    request = GenerationRequest(prompts=("A", "B"), n=2, seed=9, max_tokens=12)
    events = list(ENGINE.stream(request))
    assert isinstance(events[-1], UsageEvent)
    assert events[-1].usage == ENGINE.complete(request).usage
    assert sum(isinstance(e, FinishEvent) for e in events) == 4


def test_prompt_tokens_are_not_multiplied_by_n() -> None:
    one = complete(seed=1, n=1).usage.prompt_tokens
    assert complete(seed=1, n=3).usage.prompt_tokens == one
    assert complete(seed=1, prompts=("The Python language", "x")).usage.prompt_tokens > one


@pytest.mark.parametrize("kwargs", CASES)
def test_logprobs_are_consistent(kwargs: dict) -> None:
    kwargs = {**kwargs, "logprobs": kwargs.get("logprobs", 2)}
    completion = complete(**kwargs)
    for choice in completion.choices:
        entries = choice.logprobs
        assert entries is not None
        joined = b"".join(display_to_bytes(e.token) for e in entries).decode("utf-8")
        if choice.finish_reason == "length":
            assert joined == choice.text
        else:
            assert joined.startswith(choice.text)
        prompts = kwargs.get("prompts", ("The Python language",))
        prompt = prompts[choice.index // kwargs.get("n", 1)]
        prompt_len = 0 if kwargs.get("echo") else len(prompt)
        seen = b""
        for entry in entries:
            expected = prompt_len + len(seen.decode("utf-8", errors="ignore"))
            assert entry.offset == expected
            seen += display_to_bytes(entry.token)
            if entry.logprob is None:
                continue
            assert entry.logprob <= 0
            assert entry.top is not None and entry.top[entry.token] == entry.logprob
            assert kwargs["logprobs"] <= len(entry.top) <= kwargs["logprobs"] + 1
            assert all(v <= 0 for v in entry.top.values())


def test_echo_first_prompt_token_has_null_logprob() -> None:
    choice = complete(seed=1, echo=True, logprobs=1, max_tokens=0).choices[0]
    assert choice.text == "The Python language"
    assert choice.completion_tokens == 0 and choice.finish_reason == "length"
    assert choice.logprobs is not None
    assert choice.logprobs[0].logprob is None and choice.logprobs[0].top is None
    assert all(e.logprob is not None for e in choice.logprobs[1:])


def test_temperature_zero_picks_the_argmax() -> None:
    choice = complete(sampling=GREEDY, logprobs=5, max_tokens=20).choices[0]
    for entry in choice.logprobs or ():
        assert entry.top is not None
        assert entry.logprob == max(entry.top.values())


def _first_token(**kwargs: object) -> int:
    sampling = kwargs.pop("sampling", GREEDY)
    return complete(sampling=sampling, max_tokens=1, **kwargs).choices[0].token_ids[0]


def test_logit_bias_minus_100_bans_and_plus_100_forces() -> None:
    first = _first_token()
    assert _first_token(sampling=SamplingParams(temperature=0.0, logit_bias={first: -100})) != first
    forced = ENGINE.tokenizer.encode(" zebra")[0]
    for seed in range(3):
        params = SamplingParams(temperature=1.0, logit_bias={forced: 100})
        assert _first_token(sampling=params, seed=seed) == forced


def test_stop_string_oracle() -> None:
    baseline = complete(sampling=GREEDY, max_tokens=40).choices[0].text
    stop = baseline[10:16]
    choice = complete(sampling=GREEDY, max_tokens=40, stop=(stop,)).choices[0]
    assert choice.text == baseline[: baseline.find(stop)]
    assert choice.finish_reason == "stop"
    never = complete(sampling=GREEDY, max_tokens=40, stop=("\x00never\x00",)).choices[0]
    assert never.text == baseline and never.finish_reason == "length"


def test_multi_token_stop_string_never_leaks_into_a_stream() -> None:
    baseline = complete(sampling=GREEDY, max_tokens=40).choices[0].text
    stop = baseline[5:20]
    deltas = [
        e.text
        for e in ENGINE.stream(GenerationRequest(prompts=("The Python language",), sampling=GREEDY,
                                                 max_tokens=40, stop=(stop,)))
        if isinstance(e, (TextEvent, FinishEvent))
    ]
    assert "".join(deltas) == baseline[: baseline.find(stop)]
    running = ""
    for delta in deltas:
        running += delta
        assert stop not in running


def test_seeded_runs_repeat_and_n_choices_differ() -> None:
    params = SamplingParams(temperature=1.0)
    a = complete(seed=11, n=4, sampling=params, max_tokens=20)
    b = complete(seed=11, n=4, sampling=params, max_tokens=20)
    assert [c.text for c in a.choices] == [c.text for c in b.choices]
    assert len({c.text for c in a.choices}) >= 2
    assert [c.seed for c in a.choices] == [11, 12, 13, 14]


def test_seed_list_gives_one_seed_per_choice() -> None:
    listed = complete(seed=(5, 40), n=2, max_tokens=10)
    assert [c.seed for c in listed.choices] == [5, 40]
    assert listed.choices[1].text == complete(seed=40, max_tokens=10).choices[0].text


def test_a_seed_list_with_more_candidates_than_choices_is_refused_naming_seed() -> None:
    # one seed per returned choice cannot seed best_of > n candidates (it raised IndexError)
    with pytest.raises(InvalidRequestError) as error:
        complete(seed=(5, 40), n=2, best_of=3, max_tokens=4)
    assert error.value.param == "seed"
    assert len(complete(seed=(5, 40), n=2, best_of=2, max_tokens=4).choices) == 2


def test_unseeded_requests_report_the_seed_they_used() -> None:
    choice = complete(max_tokens=8).choices[0]
    assert complete(seed=choice.seed, max_tokens=8).choices[0].text == choice.text


def test_best_of_returns_the_best_n_by_mean_logprob() -> None:
    completion = complete(seed=3, n=2, best_of=5, max_tokens=10)
    assert [c.index for c in completion.choices] == [0, 1]
    with pytest.raises(Exception, match="cannot be streamed"):
        ENGINE.stream(GenerationRequest(prompts=("x",), best_of=2))


def test_prompt_list_choice_indices() -> None:
    completion = complete(prompts=("A", "B", "C"), n=2, seed=1, max_tokens=3, echo=True)
    assert [c.index for c in completion.choices] == list(range(6))
    assert [c.text[0] for c in completion.choices] == ["A", "A", "B", "B", "C", "C"]


def test_token_prompts_and_max_tokens_zero() -> None:
    ids = tuple(ENGINE.tokenizer.encode("The Python"))
    choice = complete(prompts=(ids,), echo=True, max_tokens=0).choices[0]
    assert choice.text == "The Python"
    assert complete(prompts=(ids,), max_tokens=0).usage.prompt_tokens == len(ids)


def test_min_tokens_and_eos_token_and_stop_tokens() -> None:
    eot = ENGINE.tokenizer.eot_id
    forced_eos = SamplingParams(temperature=1.0, logit_bias={eot: 100})
    assert complete(seed=1, sampling=forced_eos).choices[0].completion_tokens == 1
    held = SamplingParams(temperature=1.0, logit_bias={eot: 100}, min_tokens=5)
    choice = complete(seed=1, sampling=held, max_tokens=20).choices[0]
    assert choice.completion_tokens == 6 and choice.finish_reason == "stop"
    greedy = complete(sampling=GREEDY, max_tokens=12).choices[0]
    second = greedy.token_ids[3]
    eos = complete(sampling=GREEDY, max_tokens=12, eos_token_ids=(second,)).choices[0]
    assert eos.finish_reason == "stop" and eos.token_ids == greedy.token_ids[:4]
    pair = tuple(greedy.token_ids[4:6])
    stopped = complete(sampling=GREEDY, max_tokens=12, stop_token_sequences=(pair,)).choices[0]
    assert stopped.finish_reason == "stop"
    assert stopped.text == ENGINE.tokenizer.decode(list(greedy.token_ids[:4]))


def test_forced_output_tokens_are_the_output() -> None:
    forced = tuple(ENGINE.tokenizer.encode(" is a test"))
    choice = complete(
        seed=1, forced_output_tokens=forced, max_tokens=len(forced), logprobs=1
    ).choices[0]
    assert choice.text == " is a test"
    assert choice.token_ids == forced


def test_json_object_output_parses() -> None:
    params = SamplingParams(temperature=0.8, response_format="json_object")
    for seed in range(3):
        choice = complete(prompts=("{",), seed=seed, sampling=params, max_tokens=200).choices[0]
        if choice.finish_reason == "stop":
            assert isinstance(json.loads(choice.text), dict)


def test_invalid_requests_raise_typed_errors() -> None:
    with pytest.raises(TokenIdOutOfRangeError) as error:
        complete(prompts=((1, 999999),))
    assert error.value.param == "prompt"
    with pytest.raises(ContextLengthError):
        complete(max_tokens=5000)
    with pytest.raises(TokenIdOutOfRangeError):
        complete(sampling=SamplingParams(logit_bias={10**6: 1}))


def test_closing_the_stream_cancels_generation() -> None:
    events = ENGINE.stream(GenerationRequest(prompts=("x",), seed=1, max_tokens=1000))
    next(events)
    events.close()
    with pytest.raises(StopIteration):
        next(events)


def test_two_fresh_processes_give_identical_bytes() -> None:
    code = (
        "from reference_engine import *\n"
        "c = Engine().complete(GenerationRequest(prompts=('The Python',), seed=7, n=2,"
        " logprobs=3, echo=True, max_tokens=30,"
        " sampling=SamplingParams(temperature=0.9, top_p=0.95, frequency_penalty=0.3)))\n"
        "print(repr(c))\n"
    )
    outputs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                       env={"PYTHONHASHSEED": str(seed), "PATH": ""}).stdout
        for seed in (1, 2)
    }
    assert len(outputs) == 1


@pytest.mark.parametrize("penalty", [1e-300, 1e-9, 1e9, 1e300])
def test_extreme_repetition_penalties_saturate_without_warnings(penalty: float) -> None:
    params = SamplingParams(repetition_penalty=penalty, logit_bias={5: 100})
    choice = complete(prompts=("The The The",), seed=1, max_tokens=6, sampling=params).choices[0]
    assert choice.completion_tokens == 6


@pytest.mark.parametrize("penalty", [1e251, 1e300, 1e308])
@pytest.mark.parametrize("temperature", [1e-5, 1e-3, 0.5])
def test_a_huge_repetition_penalty_at_a_low_temperature_samples_without_warnings(
    penalty: float, temperature: float
) -> None:
    """The penalised logits divided by the temperature leave the float range (a schemathesis
    run of the mock once got a 500 from that overflow): the weights reach their limits."""
    params = SamplingParams(repetition_penalty=penalty, temperature=temperature)
    first, again = (complete(prompts=("the the the the the the",), seed=1, max_tokens=8,
                             sampling=params) for _ in range(2))
    assert first.choices[0].completion_tokens == 8
    assert first.choices[0].text == again.choices[0].text


@pytest.mark.parametrize("temperature", [5e-324, 1e-7])
def test_temperatures_below_the_greedy_threshold_are_greedy(temperature: float) -> None:
    text = complete(seed=1, max_tokens=8, sampling=SamplingParams(temperature=temperature))
    assert text.choices[0].text == complete(seed=2, max_tokens=8, sampling=GREEDY).choices[0].text


def test_forced_tokens_outside_the_json_grammar_are_an_invalid_request() -> None:
    params = SamplingParams(response_format="json_object")
    forced = tuple(ENGINE.tokenizer.encode("hello"))
    with pytest.raises(InvalidRequestError) as error:
        complete(seed=1, forced_output_tokens=forced, max_tokens=5, sampling=params)
    assert error.value.param == "forced_output_tokens"
    opening = tuple(ENGINE.tokenizer.encode('{"a"'))
    choice = complete(seed=1, forced_output_tokens=opening, max_tokens=8, sampling=params)
    assert choice.choices[0].text.startswith('{"a"')


def test_constraints_that_leave_no_token_end_the_choice_instead_of_failing() -> None:
    # json_object needs "{" first, and eos_token lists "{" (so it is banned until the object
    # is complete): some seeds reach a step where no token is allowed at all.
    brace = ENGINE.tokenizer.encode("{")[0]
    params = SamplingParams(temperature=1.0, response_format="json_object")
    for seed in range(6):
        choice = complete(prompts=("x",), seed=seed, max_tokens=16, sampling=params,
                          eos_token_ids=(brace,)).choices[0]
        assert choice.finish_reason in ("stop", "length")
