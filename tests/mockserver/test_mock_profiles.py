"""``--profile FILE``: the mock serves a vendor's profile on its own paths, answering invalid
input with the profile's status and unknown fields as its policy says, beside (or instead of)
the built-in routes."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from mock_live import MODEL, LiveServer

import spec
from mockserver import MockConfig
from mockserver.cli import main as mock_main

SHIPPED = Path(spec.__file__).parent / "profiles" / "openai-compatible.yaml"


def write_profile(folder: Path, name: str, *, base_path: str, unknown_fields: str,
                  invalid: int, without: tuple[str, ...] = ()) -> str:
    """An OpenAI-shaped vendor profile in ``folder``, as a user would write one."""
    raw: dict[str, Any] = yaml.safe_load(SHIPPED.read_text(encoding="utf-8"))
    raw.update(name=name, title=name, base_path=base_path, unknown_fields=unknown_fields)
    raw["request_fields"] = [f for f in raw["request_fields"] if f not in without]
    raw["operations"] = {
        "completions": {"path": f"{base_path}/completions", "method": "post",
                        "operation_id": "createCompletion"},
        "models": {"path": f"{base_path}/models", "method": "get", "operation_id": "listModels"},
    }
    raw["errors"]["invalid_request"] = [invalid]
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return str(path)


def body(**extra: Any) -> dict[str, Any]:
    return {"model": MODEL, "prompt": "Hello", "max_tokens": 3, "temperature": 0, **extra}


def test_a_profile_is_served_on_its_own_paths_with_its_policy(
        make_server: Callable[..., LiveServer], tmp_path: Path) -> None:
    profile_file = write_profile(tmp_path, "vendor-y", base_path="/api/v2",
                                 unknown_fields="ignore", invalid=422)
    live = make_server(profile_refs=(profile_file,))
    ignored = live.post("/api/v2/completions", body(frobnicate=1))
    assert ignored.status == 200, ignored.data
    assert ignored.json()["choices"][0]["text"] == live.post("/v1/completions", body()).json()[
        "choices"][0]["text"]
    invalid = live.post("/api/v2/completions", body(max_tokens=-1))
    assert (invalid.status, invalid.error["param"]) == (422, "max_tokens")
    assert live.call("GET", "/api/v2/models").json()["data"][0]["id"] == MODEL
    # the built-in routes are as before: strict, 400
    strict = live.post("/v1/completions", body(frobnicate=1))
    assert (strict.status, strict.error["param"]) == (400, "frobnicate")


def test_a_rejecting_profile_names_the_field_outside_its_list(
        make_server: Callable[..., LiveServer], tmp_path: Path) -> None:
    """A field the wire's schema knows but the profile does not list (here ``top_k``) is an
    unknown field of that profile."""
    profile_file = write_profile(tmp_path, "vendor-z", base_path="/z/v1",
                                 unknown_fields="reject", invalid=400, without=("top_k",))
    live = make_server(profile_refs=(profile_file,))
    answer = live.post("/z/v1/completions", body(top_k=5))
    assert (answer.status, answer.error["param"], answer.error["code"]) == (
        400, "top_k", "unknown_parameter")
    assert live.post("/v1/completions", body(top_k=5)).status == 200


def test_a_profile_on_v1_takes_the_built_in_route_over(
        make_server: Callable[..., LiveServer], tmp_path: Path) -> None:
    """Most vendors serve ``/v1``: their profile replaces the built-in OpenAI route there."""
    profile_file = write_profile(tmp_path, "vendor-v1", base_path="/v1",
                                 unknown_fields="ignore", invalid=422)
    live = make_server(profile_refs=(profile_file,))
    assert live.post("/v1/completions", body(frobnicate=1)).status == 200
    assert live.post("/v1/completions", body(max_tokens=-1)).status == 422
    assert live.post("/dedicated/v1/completions", body(max_tokens=-1)).status == 422


def test_profiles_that_cannot_be_served_are_refused_naming_the_flag(tmp_path: Path) -> None:
    first = write_profile(tmp_path, "one", base_path="/same/v1", unknown_fields="ignore",
                          invalid=400)
    second = write_profile(tmp_path, "two", base_path="/same/v1", unknown_fields="reject",
                           invalid=422)
    with pytest.raises(ValueError, match=r"--profile .*two.*/same/v1.*already served"):
        MockConfig(profile_refs=(first, second))
    with pytest.raises(ValueError, match="--profile nonesuch"):
        MockConfig(profile_refs=("nonesuch",))


def test_the_cli_refuses_an_unknown_profile_with_a_usage_error(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        mock_main(["--profile", "nonesuch", "--port", "0"])
    assert exited.value.code == 2
    assert "--profile nonesuch" in capsys.readouterr().err


def test_the_cli_says_a_missing_profile_file_is_not_found(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        mock_main(["--profile", "/nonexistent.yaml", "--port", "0"])
    assert exited.value.code == 2
    assert "--profile /nonexistent.yaml: profile file not found: /nonexistent.yaml" in (
        capsys.readouterr().err)


def test_the_cli_names_the_key_of_a_malformed_profile_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = yaml.safe_load(SHIPPED.read_text(encoding="utf-8"))
    raw.update(name="vendor-v")
    raw["errors"]["invalid_request"] = 422
    path = tmp_path / "vendor-v.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    with pytest.raises(SystemExit) as exited:
        mock_main(["--profile", str(path), "--port", "0"])
    assert exited.value.code == 2
    assert "errors.invalid_request: 422 is not of type 'array'" in capsys.readouterr().err


def test_a_profile_is_validated_with_its_own_request_schema(
        make_server: Callable[..., LiveServer], tmp_path: Path) -> None:
    """The profile's ``required_fields`` and ``request_fields`` make its request schema; the
    wire's schema (which requires only ``model`` and ``prompt``) does not decide."""
    path = Path(write_profile(tmp_path, "vendor-r", base_path="/r/v1", unknown_fields="reject",
                              invalid=422, without=("top_k",)))
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    raw["required_fields"] = [*raw["required_fields"], "max_tokens"]
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    live = make_server(profile_refs=(str(path),))
    missing = live.post("/r/v1/completions", {"model": MODEL, "prompt": "Hello"})
    assert (missing.status, missing.error["param"], missing.error["code"]) == (
        422, "max_tokens", "missing_required_parameter")
    unknown = live.post("/r/v1/completions", body(top_k=5))
    assert (unknown.status, unknown.error["param"]) == (422, "top_k")
    assert live.post("/r/v1/completions", body()).status == 200
    assert live.post("/v1/completions", {"model": MODEL, "prompt": "Hello"}).status == 200


def test_the_vllm_profile_takes_vllms_extensions_and_ignores_unknown_ones(
        make_server: Callable[..., LiveServer]) -> None:
    live = make_server(profile_refs=("vllm",))
    plain = live.post("/v1/completions", body()).json()["choices"][0]["text"]
    extended = live.post("/v1/completions", body(
        top_k=0, min_p=0, repetition_penalty=1, min_tokens=0, skip_special_tokens=False,
        spaces_between_special_tokens=True, add_special_tokens=True, ignore_eos=False,
        stop_token_ids=[], include_stop_str_in_output=False, prompt_logprobs=None,
        return_tokens_as_token_ids=False, frobnicate=1, best_of=3))
    assert extended.status == 200, extended.data
    assert extended.json()["choices"][0]["text"] == plain


def greedy(prompt: str, **extra: Any) -> dict[str, Any]:
    return {"model": MODEL, "prompt": prompt, "max_tokens": 16, "temperature": 0, **extra}


def test_the_vllm_profile_honours_ignore_eos(make_server: Callable[..., LiveServer]) -> None:
    live = make_server(profile_refs=("vllm",))
    ending = "It was going to be a fine"
    early = live.post("/v1/completions", greedy(ending)).json()
    kept = live.post("/v1/completions", greedy(ending, ignore_eos=True)).json()
    assert early["usage"]["completion_tokens"] < 16 <= kept["usage"]["completion_tokens"]
    assert kept["choices"][0]["text"].startswith(early["choices"][0]["text"])
    assert (kept["choices"][0]["finish_reason"], kept["choices"][0]["stop_reason"]) == (
        "length", None)


def test_the_vllm_profile_stops_on_stop_token_ids_and_names_them(
        make_server: Callable[..., LiveServer]) -> None:
    live = make_server(profile_refs=("vllm",))
    named = live.post("/v1/completions", greedy("Example:", logprobs=0,
                                                return_tokens_as_token_ids=True)).json()
    plain = live.post("/v1/completions", greedy("Example:", logprobs=0)).json()
    ids = [int(t.split(":")[1]) for t in named["choices"][0]["logprobs"]["tokens"]]
    texts = plain["choices"][0]["logprobs"]["tokens"]
    position = next(i for i in range(2, len(ids)) if ids[i] not in ids[:i])
    for include, expected in ((False, "".join(texts[:position])),
                              (True, "".join(texts[:position + 1]))):
        answer = live.post("/v1/completions", greedy(
            "Example:", stop_token_ids=[ids[position]],
            include_stop_str_in_output=include)).json()["choices"][0]
        assert (answer["text"], answer["finish_reason"], answer["stop_reason"]) == (
            expected, "stop", ids[position])


def test_the_vllm_profile_keeps_the_stop_string_when_asked_streamed_or_not(
        make_server: Callable[..., LiveServer]) -> None:
    live = make_server(profile_refs=("vllm",))
    text = live.post("/v1/completions", greedy("Example:")).json()["choices"][0]["text"]
    stop = text[8:11]
    cut = text.index(stop)
    for include, expected in ((False, text[:cut]), (True, text[:cut + len(stop)])):
        fields = greedy("Example:", stop=[stop], include_stop_str_in_output=include)
        answer = live.post("/v1/completions", fields).json()["choices"][0]
        assert (answer["text"], answer["stop_reason"]) == (expected, stop)
        streamed = live.post("/v1/completions", {**fields, "stream": True})
        assert "".join(c["choices"][0]["text"] for c in streamed.chunks()
                       if isinstance(c, dict) and c["choices"]) \
            == expected


def test_the_vllm_profile_returns_prompt_logprobs_as_vllm_does(
        make_server: Callable[..., LiveServer]) -> None:
    live = make_server(profile_refs=("vllm",))
    answer = live.post("/v1/completions", greedy("It was going to be", max_tokens=1,
                                                 prompt_logprobs=2)).json()
    entries = answer["choices"][0]["prompt_logprobs"]
    assert len(entries) == answer["usage"]["prompt_tokens"] and entries[0] is None
    for entry in entries[1:]:
        assert 1 <= len(entry) <= 3
        assert {1, 2} <= {value["rank"] for value in entry.values()}
        assert all(key.isdigit() and value["logprob"] <= 0 for key, value in entry.items())
    refused = live.post("/v1/completions", greedy("Hi", prompt_logprobs=1, stream=True))
    assert (refused.status, refused.error["param"]) == (400, "prompt_logprobs")


def test_the_vllm_profile_names_logprob_tokens_by_id(
        make_server: Callable[..., LiveServer]) -> None:
    live = make_server(profile_refs=("vllm",))
    logprobs = live.post("/v1/completions", greedy("Hi", logprobs=2,
                                                   return_tokens_as_token_ids=True)
                         ).json()["choices"][0]["logprobs"]
    names = [*logprobs["tokens"], *(k for top in logprobs["top_logprobs"] for k in top)]
    assert names and all(re.fullmatch(r"token_id:[0-9]+", name) for name in names)


def test_the_vllm_profile_answers_a_body_without_model_with_its_model(
        make_server: Callable[..., LiveServer]) -> None:
    """``defaultable_fields: [model]`` (the profile's data); the built-in route still
    requires the model."""
    live = make_server(profile_refs=("vllm",))
    answer = live.post("/v1/completions", {"prompt": "Hello", "max_tokens": 2})
    assert (answer.status, answer.json()["model"]) == (200, MODEL)
    strict = make_server()
    missing = strict.post("/v1/completions", {"prompt": "Hello", "max_tokens": 2})
    assert (missing.status, missing.error["param"]) == (400, "model")
