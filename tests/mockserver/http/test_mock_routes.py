"""Routes other than completions, and the envelope on unknown paths and wrong methods."""

from __future__ import annotations

import json

import yaml
from mock_live import MODEL, LiveServer

import spec
from mockserver.faults import fault_names


def test_models(server: LiveServer) -> None:
    reply = server.call("GET", "/v1/models")
    assert reply.status == 200 and reply.content_type == "application/json"
    spec.get_profile("openai").validator("models").validate(reply.json())
    assert [m["id"] for m in reply.json()["data"]] == [MODEL]


def test_openapi_documents_are_the_contract(server: LiveServer) -> None:
    yaml_reply = server.call("GET", "/openapi.yaml")
    assert yaml_reply.data == spec.document_bytes()
    assert yaml.safe_load(yaml_reply.data)["openapi"].startswith("3.1")
    json_reply = server.call("GET", "/openapi.json")
    assert json_reply.data == spec.document_json()
    assert json.loads(json_reply.data) == spec.load_document()


def test_health(server: LiveServer) -> None:
    reply = server.call("GET", "/health")
    assert reply.status == 200 and reply.json()["status"] == "ok"


def test_fault_catalog(server: LiveServer) -> None:
    entries = server.call("GET", "/mock/faults").json()["data"]
    assert [entry["name"] for entry in entries] == fault_names()
    assert all(entry["description"] and entry["breaks"] and entry["hook"] for entry in entries)
    assert all(entry["wires"] and set(entry["wires"]) <= {"openai", "friendli"}
               for entry in entries)


def test_unknown_path_gets_the_envelope(server: LiveServer) -> None:
    reply = server.call("GET", "/v1/chat/completions")
    assert reply.status == 404 and reply.error["code"] == "not_found"


def test_wrong_method_gets_the_envelope(server: LiveServer) -> None:
    reply = server.call("GET", "/v1/completions")
    assert reply.status == 405 and reply.error["code"] == "method_not_allowed"
    assert reply.headers["allow"] == "POST"
    assert server.call("DELETE", "/v1/models").status == 405


def test_head_on_models(server: LiveServer) -> None:
    reply = server.call("HEAD", "/v1/models")
    assert reply.status == 200 and reply.data == b""


def test_friendli_team_header_is_accepted(server: LiveServer) -> None:
    body = {"model": MODEL, "prompt": "Hi", "max_tokens": 1}
    reply = server.post("/dedicated/v1/completions", body, headers={"X-Friendli-Team": "team-1"})
    assert reply.status == 200


def test_tokenize_and_detokenize_round_trip_as_llama_cpp_spells_them(server: LiveServer) -> None:
    tokens = server.post("/tokenize", {"content": "A list is a"}).json()["tokens"]
    assert tokens and all(isinstance(t, int) for t in tokens)
    assert server.post("/tokenize", {"prompt": "A list is a"}).json()["tokens"] == tokens  # vLLM
    assert server.post("/detokenize", {"tokens": tokens}).json() == {"content": "A list is a"}


def test_tokenize_refuses_what_it_cannot_read_with_the_field(server: LiveServer) -> None:
    for path, body, param in (("/tokenize", {"content": 3}, "content"),
                              ("/tokenize", {"content": "x" * 10_001}, "content"),
                              ("/detokenize", {"tokens": [-1]}, "tokens"),
                              ("/detokenize", {"tokens": "12"}, "tokens"),
                              ("/detokenize", [1, 2], None)):
        reply = server.post(path, body)
        assert reply.status == 400 and reply.json()["error"]["param"] == param, (path, body)
