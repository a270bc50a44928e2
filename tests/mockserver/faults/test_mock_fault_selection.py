"""How faults are chosen (server, header, chaos) and what the registry accepts."""

from __future__ import annotations

from typing import Any

import pytest
from mock_live import MODEL, LiveServer

from mockserver import MockConfig
from mockserver.faults import (
    HOOK_METHODS,
    Chaos,
    Fault,
    FaultContext,
    UnknownFaultError,
    all_faults,
    get_fault,
    parse_fault_names,
    register,
)
from mockserver.faults.base import HookKind

BODY = {"model": MODEL, "prompt": "Hi", "max_tokens": 2, "seed": 1}


def test_server_faults_apply_to_every_request(make_server: Any) -> None:
    live = make_server(faults=("object-wrong", "usage-total-wrong"))
    data = live.post("/v1/completions", BODY).json()
    assert data["object"] == "text.completion"
    assert data["usage"]["total_tokens"] != data["usage"]["prompt_tokens"] + \
        data["usage"]["completion_tokens"]


def test_header_takes_several_faults(server: LiveServer) -> None:
    reply = server.post("/v1/completions", BODY,
                        headers={"X-Mock-Fault": "object-wrong, length-reported-as-stop"})
    data = reply.json()
    assert data["object"] == "text.completion" and data["choices"][0]["finish_reason"] == "stop"


def test_unknown_fault_in_header_is_400(server: LiveServer) -> None:
    reply = server.post("/dedicated/v1/completions", BODY, headers={"X-Mock-Fault": "nope"})
    assert reply.status == 400 and reply.error["code"] == "unknown_fault"
    assert "'nope'" in reply.error["message"] and "done-missing" in reply.error["message"]


def test_unknown_server_fault_fails_at_start_up() -> None:
    with pytest.raises(UnknownFaultError, match=r"valid faults: .*done-missing"):
        MockConfig(faults=("nope",))
    with pytest.raises(UnknownFaultError):
        MockConfig(chaos_faults=("nope",))


def test_header_faults_also_bend_errors(make_server: Any) -> None:
    live = make_server(api_keys=("k",))
    reply = live.post("/v1/completions", BODY, headers={"X-Mock-Fault": "error-no-envelope"})
    assert reply.status == 401 and reply.content_type.startswith("text/plain")


def test_chaos_every_k(make_server: Any) -> None:
    live = make_server(chaos_every=2, chaos_faults=("object-wrong",))
    objects = [live.post("/v1/completions", BODY).json()["object"] for _ in range(4)]
    assert objects == ["text_completion", "text.completion"] * 2


def test_chaos_picks_only_applicable_faults(make_server: Any) -> None:
    live = make_server(chaos_every=1, chaos_faults=("done-missing", "object-wrong",
                                                    "invalid-input-500"))
    assert live.post("/v1/completions", BODY).json()["object"] == "text.completion"
    assert live.post("/v1/completions", {**BODY, "temperature": 9}).status == 500
    stream = live.post("/v1/completions", {**BODY, "stream": True})
    assert "[DONE]" not in stream.events()


def test_chaos_probability_is_seeded() -> None:
    def picks(seed: int) -> list[int | None]:
        chaos = Chaos(probability=0.5, seed=seed, pool=(get_fault("object-wrong"),))
        return [chaos.ticket() for _ in range(40)]

    assert picks(3) == picks(3)
    assert 0 < sum(p is not None for p in picks(3)) < 40
    assert Chaos().ticket() is None


def test_chaos_default_pool_leaves_out_stall() -> None:
    pool = Chaos(every=1).pool
    assert get_fault("stall") not in pool and get_fault("slow-drip") in pool


def test_parse_fault_names() -> None:
    assert [f.name for f in parse_fault_names(["stall,slow-drip", " stall "])] == [
        "stall", "slow-drip"]


def test_every_fault_is_well_formed() -> None:
    for fault in all_faults():
        assert fault.hook in HOOK_METHODS
        assert fault.description.strip() and fault.breaks.strip()
        assert fault.name == fault.name.lower() and " " not in fault.name


def _fault_class(name: str, hook: HookKind, *methods: str) -> type[Fault]:
    attributes: dict[str, Any] = {"name": name, "description": "d", "breaks": "b", "hook": hook}
    for method in methods:
        attributes[method] = lambda self, value, ctx: value
    return type("Broken", (Fault,), attributes)


@pytest.mark.parametrize(
    ("cls", "message"),
    [
        (_fault_class("NotKebab", "payload", "alter_payload"), "kebab-case"),
        (_fault_class("object-wrong", "payload", "alter_payload"), "registered twice"),
        (_fault_class("two-hooks", "payload", "alter_payload", "alter_body"), "exactly one hook"),
        (_fault_class("wrong-hook", "body", "alter_payload"), "exactly one hook"),
    ],
)
def test_registry_refuses_malformed_faults(cls: type[Fault], message: str) -> None:
    with pytest.raises((TypeError, ValueError), match=message):
        register(cls)


def test_applicability() -> None:
    friendli_only = get_fault("token-field-missing")
    assert friendli_only.applies(FaultContext(wire="friendli", stream=True))
    assert not friendli_only.applies(FaultContext(wire="openai", stream=True))
    assert not friendli_only.applies(FaultContext(wire="friendli", stream=False))
    models = get_fault("models-shape-wrong")
    assert models.applies(FaultContext(wire="openai", operation="models"))
    assert not models.applies(FaultContext(wire="openai"))


def test_fault_context_reads_the_body() -> None:
    ctx = FaultContext(wire="openai", body={"prompt": ["a", "b"], "n": 3, "stop": "x",
                                               "logprobs": 2})
    assert (ctx.prompt_count, ctx.n, ctx.stops, ctx.logprobs) == (2, 3, ("x",), 2)
    empty = FaultContext(wire="openai")
    assert (empty.prompt_count, empty.n, empty.stops, empty.logprobs) == (1, 1, (), None)
    assert FaultContext(wire="openai", body={"prompt": [1, 2]}).prompt_count == 1
