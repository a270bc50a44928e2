"""``/v1/models`` says where the tokenizer is; ``/tokenizer/...`` serves the exported files,
whose ids are ``POST /tokenize``'s."""

from __future__ import annotations

from collections.abc import Callable

from mock_live import ENGINE, MODEL, LiveServer
from tokenizers import Tokenizer as HFTokenizer

from reference_engine import CONTEXT_LENGTH
from reference_engine.tokenizer.huggingface import FILES, files

TEXTS = ["A list is a", "Café 日本語 x\x1cy  \n\n 42²", "one<|endoftext|>two", ""]


def test_models_name_the_tokenizer_files_and_they_are_the_export(server: LiveServer) -> None:
    (model,) = server.call("GET", "/v1/models").json()["data"]
    assert model["tokenizer"]["format"] == "huggingface"
    paths = model["tokenizer"]["files"]
    assert sorted(paths) == sorted(FILES)
    exported = files(ENGINE.tokenizer, context_length=CONTEXT_LENGTH)
    for name, path in paths.items():
        assert path == f"/tokenizer/{MODEL}/{name}"
        reply = server.call("GET", path)
        assert reply.status == 200 and reply.content_type.startswith("application/json")
        assert reply.data == exported[name]


def test_served_tokenizer_gives_the_ids_of_tokenize(server: LiveServer) -> None:
    served = server.call("GET", f"/tokenizer/{MODEL}/tokenizer.json").data.decode("utf-8")
    tokenizer = HFTokenizer.from_str(served)
    for text in TEXTS:
        ids = server.post("/tokenize", {"content": text}).json()["tokens"]
        assert tokenizer.encode(text).ids == ids, text


def test_unknown_model_or_file_is_a_404_envelope(server: LiveServer) -> None:
    for path in ("/tokenizer/other-model/tokenizer.json", f"/tokenizer/{MODEL}/vocab.txt"):
        reply = server.call("GET", path)
        assert reply.status == 404 and reply.json()["error"]["code"] == "not_found", path


def test_tokenizer_files_need_no_api_key(make_server: Callable[..., LiveServer]) -> None:
    live = make_server(api_keys=("sk-test",))
    assert live.call("GET", "/v1/models").status == 401
    assert live.call("GET", f"/tokenizer/{MODEL}/tokenizer_config.json").status == 200
