"""Recorded exchanges written by hand, clean or with one named deviation, and the recording
files that hold them (HAR, cassette), for the tests of ``conformance judge``."""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

MODEL = "gpt-3.5-turbo-instruct"
URL = "https://api.openai.com/v1/completions"
KEY = "sk-live-SECRET0123456789"
STREAM_REQUEST: dict[str, Any] = {
    "model": MODEL, "prompt": "Say hello", "max_tokens": 4, "stream": True,
    "stream_options": {"include_usage": True},
}
PLAIN_REQUEST: dict[str, Any] = {"model": MODEL, "prompt": "Say hello", "max_tokens": 4}
TEXTS = (" Hello", " world", ",", " and")
USAGE = {"prompt_tokens": 2, "completion_tokens": 4, "total_tokens": 6}


def chunk(text: str, finish: str | None = None) -> dict[str, Any]:
    return {"id": "cmpl-abc123", "object": "text_completion", "created": 1765000000,
            "model": MODEL, "choices": [{"text": text, "index": 0, "logprobs": None,
                                         "finish_reason": finish}], "usage": None}


def clean_events() -> list[Any]:
    """A stream as OpenAI sends one: the tokens, the last with ``length``, the usage chunk,
    ``[DONE]`` (a string stands for a raw ``data:`` payload)."""
    events: list[Any] = [chunk(text) for text in TEXTS[:-1]]
    events.append(chunk(TEXTS[-1], "length"))
    events.append({**chunk(""), "choices": [], "usage": USAGE})
    events.append("[DONE]")
    return events


def sse(events: list[Any]) -> str:
    return "".join(f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n" for e in events)


def clean_answer() -> dict[str, Any]:
    """A non-streamed answer as OpenAI sends one."""
    return {"id": "cmpl-abc124", "object": "text_completion", "created": 1765000000,
            "model": MODEL, "choices": [{"text": "".join(TEXTS), "index": 0,
                                         "logprobs": None, "finish_reason": "length"}],
            "usage": USAGE}


def usage_before_finish(events: list[Any]) -> list[Any]:
    return [*events[:3], events[4], events[3], events[5]]


def without_done(events: list[Any]) -> list[Any]:
    return events[:-1]


def finish_changed(events: list[Any]) -> list[Any]:
    changed = json.loads(json.dumps(events))
    changed[3]["choices"][0]["finish_reason"] = "eos"
    return changed


def text_after_finish(events: list[Any]) -> list[Any]:
    return [*events[:4], chunk(" more"), *events[4:]]


DEVIATIONS: dict[str, tuple[Callable[[list[Any]], list[Any]], str]] = {
    "usage before finish": (usage_before_finish, "USAGE-005"),
    "no [DONE]": (without_done, "SSE-005"),
    "a changed finish reason": (finish_changed, "FINISH-003"),
    "text after the finish": (text_after_finish, "FINISH-004"),
}
"""Each deviation written into the clean stream, and the one rule that owns it."""


def har_entry(request: dict[str, Any], body: str, *, status: int = 200,
              content_type: str = "text/event-stream", base64_body: bool = False,
              comment: str | None = None, url: str = URL, method: str = "POST",
              size: int | None = None) -> dict[str, Any]:
    raw = body.encode()
    content: dict[str, Any] = {"size": len(raw) if size is None else size,
                               "mimeType": content_type}
    if base64_body:
        content.update(text=base64.b64encode(raw).decode(), encoding="base64")
    else:
        content["text"] = body
    entry: dict[str, Any] = {
        "startedDateTime": "2026-12-06T10:00:00.000Z", "time": 120,
        "request": {
            "method": method, "url": url, "httpVersion": "HTTP/2",
            "headers": [{"name": ":authority", "value": "api.openai.com"},
                        {"name": "authorization", "value": f"Bearer {KEY}"},
                        {"name": "content-type", "value": "application/json"},
                        {"name": "user-agent", "value": "OpenAI/Python 1.54.0"}],
            "queryString": [], "cookies": [], "headersSize": -1, "bodySize": -1,
            "postData": {"mimeType": "application/json", "text": json.dumps(request)},
        },
        "response": {
            "status": status, "statusText": "", "httpVersion": "HTTP/2",
            "headers": [{"name": "content-type", "value": content_type}],
            "cookies": [], "content": content, "redirectURL": "", "headersSize": -1,
            "bodySize": -1,
        },
        "cache": {}, "timings": {"send": 0, "wait": 100, "receive": 20},
    }
    if comment is not None:
        entry["comment"] = comment
    return entry


def write_har(path: Path, entries: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"log": {"version": "1.2", "creator": {
        "name": "WebInspector", "version": "537.36"}, "entries": entries}}), encoding="utf-8")
    return path


def interaction(request: dict[str, Any], body: str, *, gzipped: bool = False,
                content_type: str = "text/event-stream", status: int = 200,
                url: str = URL) -> dict[str, Any]:
    headers: dict[str, list[str]] = {"Content-Type": [content_type]}
    response_body: Any = body
    if gzipped:
        headers["Content-Encoding"] = ["gzip"]
        response_body = gzip.compress(body.encode())
    return {
        "request": {"body": json.dumps(request), "method": "POST", "uri": url,
                    "headers": {"Authorization": [f"Bearer {KEY}"],
                                "Content-Type": ["application/json"]}},
        "response": {"status": {"code": status, "message": "OK"}, "headers": headers,
                     "body": {"string": response_body}},
    }


def write_cassette(path: Path, interactions: list[dict[str, Any]]) -> Path:
    path.write_text(yaml.safe_dump({"interactions": interactions, "version": 1}),
                    encoding="utf-8")
    return path
