"""Helpers of the fuzz tests: schemathesis responses made by hand, and CLI runs in-process."""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Sequence

import requests
import schemathesis

import spec
from conformance.bindings.sample import Sample
from conformance.cli import main
from conformance.contract.validity import classify
from conformance.fuzz.exchange import to_exchange
from conformance.run.settings import Settings

MODEL = "reference-ngram"
OPENAI_URL = "http://127.0.0.1:9/v1/completions"


def sse(*payloads: object, done: bool = True) -> bytes:
    """An event stream of JSON payloads (and ``[DONE]``), one event each."""
    events = [f"data: {json.dumps(p, separators=(',', ':'))}\n\n" for p in payloads]
    if done:
        events.append("data: [DONE]\n\n")
    return "".join(events).encode()


def response(body: object, content: bytes, *, status: int = 200,
             content_type: str = "application/json", url: str = OPENAI_URL,
             headers: Iterable[tuple[str, str]] = (), method: str = "POST",
             ) -> schemathesis.Response:
    """A schemathesis response to a POST of ``body`` (JSON), as the transport builds them."""
    prepared = requests.Request(
        method, url, data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **dict(headers)},
    ).prepare()
    return schemathesis.Response(status_code=status, headers={"content-type": [content_type]},
                                 content=content, request=prepared, elapsed=0.05, verify=True)


def settings(profile_name: str = "openai", **options: object) -> Settings:
    chosen = spec.get_profile(profile_name)
    return Settings(base_url="http://127.0.0.1:9" + chosen.base_path, profile=chosen,
                    model=MODEL, features=chosen.features, **options)  # type: ignore[arg-type]


def sample(body: object, content: bytes, *, profile_name: str = "openai", status: int = 200,
           content_type: str = "application/json", operation: str = "completions") -> Sample:
    exchange = to_exchange(response(body, content, status=status, content_type=content_type))
    return Sample(operation, body, classify(body, spec.get_profile(profile_name)), exchange)


def chunk(index: int, text: str, finish: str | None = None, **extra: object) -> dict:
    choice = {"index": index, "text": text, "logprobs": None, "finish_reason": finish}
    return {"id": "cmpl-1", "object": "text_completion", "created": 1, "model": MODEL,
            "choices": [choice], "usage": None, **extra}


def completion(text: str, *, usage: tuple[int, int, int] = (2, 3, 5), **choice: object) -> dict:
    prompt, completion_tokens, total = usage
    return {
        "id": "cmpl-1", "object": "text_completion", "created": 1, "model": MODEL,
        "choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": "length",
                     **choice}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion_tokens,
                  "total_tokens": total},
    }


def run_cli(args: Sequence[str]) -> tuple[int, str, str]:
    """``conformance <args>`` in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    status = main(list(args), out=out, err=err)
    return status, out.getvalue(), err.getvalue()


def findings(report: dict) -> list[dict]:
    """Every finding of a fuzz JSON report, each with its rule, its request and whether it was
    shrunk (the report keeps the request as an exchange, under the finding's label)."""
    found = []
    for result in report["results"]:
        for finding in result["findings"]:
            exchange = report["exchanges"][finding["exchange"]]
            found.append({**finding, "rule": result["rule"], "request": exchange["request"],
                          "shrunk": finding["exchange"].endswith(", shrunk")})
    return found


def found_rules(report: dict) -> set[str]:
    """The rules (catalog IDs, or FUZZ-NNN for schemathesis' checks) a fuzz run failed."""
    return {result["rule"] for result in report["results"] if result["findings"]}
