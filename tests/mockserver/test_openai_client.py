"""The official ``openai`` client (sync and async) against the mock on loopback.

The session server runs in a background thread of this process; ``cli_server`` starts the
real command line as a subprocess and reads its ready line.
"""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from mock_live import MODEL, LiveServer


@pytest.fixture(scope="module")
def client(server: LiveServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=f"{server.url}/v1", api_key="anything", max_retries=0) as made:
        yield made


@pytest.fixture(scope="module")
def cli_server() -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "mockserver", "--port", "0", "--api-key", "sk-cli"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    assert process.stdout is not None
    match = re.search(r"http://127\.0\.0\.1:(\d+)/v1", process.stdout.readline())
    assert match
    yield f"http://127.0.0.1:{match.group(1)}/v1"
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=20)
    process.stdout.close()


def test_create(client: openai.OpenAI) -> None:
    completion = client.completions.create(model=MODEL, prompt="The Python", max_tokens=5,
                                           seed=1)
    assert completion.object == "text_completion" and completion.choices[0].text
    assert completion.usage is not None and completion.usage.completion_tokens <= 5
    assert completion.system_fingerprint is not None


def test_stream_with_usage(client: openai.OpenAI) -> None:
    kwargs: dict[str, Any] = {"model": MODEL, "prompt": "The Python", "max_tokens": 6,
                              "temperature": 0}
    whole = client.completions.create(**kwargs)
    chunks = list(client.completions.create(**kwargs, stream=True,
                                            stream_options={"include_usage": True}))
    text = "".join(c.choices[0].text for c in chunks if c.choices)
    assert text == whole.choices[0].text
    assert chunks[-1].choices == [] and chunks[-1].usage == whole.usage


def test_n_logprobs_echo_stop_and_prompt_lists(client: openai.OpenAI) -> None:
    completion = client.completions.create(
        model=MODEL, prompt=["Alpha", "Beta"], n=2, logprobs=2, echo=True, stop=["\n"],
        max_tokens=4, seed=5,
    )
    assert [c.index for c in completion.choices] == [0, 1, 2, 3]
    for choice in completion.choices:
        assert choice.text.startswith("Alpha" if choice.index < 2 else "Beta")
        assert "\n" not in choice.text[len("Alpha"):]
        assert choice.logprobs is not None and choice.logprobs.token_logprobs is not None
        assert choice.logprobs.token_logprobs[0] is None


def test_token_prompts(client: openai.OpenAI) -> None:
    completion = client.completions.create(model=MODEL, prompt=[[464, 1361], [13]], max_tokens=1)
    assert completion.usage is not None and completion.usage.prompt_tokens == 3


def test_bad_request(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        client.completions.create(model=MODEL, prompt="x", temperature=5)
    assert raised.value.status_code == 400
    assert raised.value.body["param"] == "temperature"  # type: ignore[index]


def test_unknown_model(client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError):
        client.completions.create(model="gpt-4", prompt="x")


def test_models(client: openai.OpenAI) -> None:
    assert [m.id for m in client.models.list()] == [MODEL]


def test_async_client(server: LiveServer) -> None:
    async def scenario() -> tuple[str, str]:
        async with openai.AsyncOpenAI(base_url=f"{server.url}/v1", api_key="x",
                                      max_retries=0) as client:
            kwargs: dict[str, Any] = {"model": MODEL, "prompt": "Hi", "max_tokens": 4, "seed": 9}
            whole = await client.completions.create(**kwargs)
            stream = await client.completions.create(**kwargs, stream=True)
            text = "".join([c.choices[0].text async for c in stream if c.choices])
            return whole.choices[0].text, text

    whole, streamed = asyncio.run(scenario())
    assert whole == streamed


def test_subprocess_server_with_api_key(cli_server: str) -> None:
    with openai.OpenAI(base_url=cli_server, api_key="sk-cli", max_retries=0) as client:
        stream = client.completions.create(model=MODEL, prompt="Hi", max_tokens=3, stream=True)
        assert "".join(c.choices[0].text for c in stream if c.choices) is not None
    with openai.OpenAI(base_url=cli_server, api_key="wrong", max_retries=0) as client:
        with pytest.raises(openai.AuthenticationError):
            client.completions.create(model=MODEL, prompt="Hi", max_tokens=1)
