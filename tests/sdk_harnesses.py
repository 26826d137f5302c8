"""The official SDKs' stream accumulators as harnesses under test (tests/test_testing_sdks.py).

Each wraps one SDK helper the way its documentation shows, fed the variant's bytes as the HTTP
response body through an httpx transport (the SDK's own HTTP, SSE and accumulation code runs;
only the socket is left out; a cut stream ends cleanly, the hardest case), and "executes" what
the helper hands back at the end of the stream: every function call / tool_use block of the
final message, with its arguments as the SDK gives them (the openai SDKs hand back text,
parsed here with json.loads as a user would; the anthropic SDK hands back a parsed
``input``). A helper that raises executed nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import httpx
import httpx2
import openai

SDKHarness = Callable[[Iterator[bytes]], list[tuple[str, Any]]]


class _Stream:
    """An httpx transport answering every request with the current variant's bytes (the
    openai SDK is built on httpx, the anthropic SDK on its fork httpx2: ``http`` is either)."""

    def __init__(self, http: Any = httpx) -> None:
        self.http = http
        self.pieces: Iterator[bytes] = iter(())

        class Body(http.SyncByteStream):  # type: ignore[misc,name-defined]
            def __iter__(body) -> Iterator[bytes]:
                yield from self.pieces

        self.body = Body

    def answer(self, request: Any) -> Any:
        return self.http.Response(200, headers={"content-type": "text/event-stream"},
                                  stream=self.body())

    def client(self) -> Any:
        return self.http.Client(transport=self.http.MockTransport(self.answer))


def chat_calls(client: openai.OpenAI, tools: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """``client.chat.completions.stream(...)`` then ``get_final_completion()``."""
    with client.chat.completions.stream(model="gpt-4o", tools=tools,
                                        messages=[{"role": "user", "content": "go"}]) as stream:
        completion = stream.get_final_completion()
    calls = completion.choices[0].message.tool_calls or []
    return [(c.function.name, json.loads(c.function.arguments)) for c in calls]


def responses_calls(client: openai.OpenAI, tools: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """``client.responses.stream(...)`` then ``get_final_response()``."""
    with client.responses.stream(model="gpt-5", input="go", tools=tools) as stream:
        response = stream.get_final_response()
    return [(item.name, json.loads(item.arguments)) for item in response.output
            if item.type == "function_call"]


def anthropic_calls(client: anthropic.Anthropic, tools: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """``client.messages.stream(...)`` then ``get_final_message()``."""
    with client.messages.stream(model="claude-sonnet-4-5", max_tokens=1024, tools=tools,
                                messages=[{"role": "user", "content": "go"}]) as stream:
        message = stream.get_final_message()
    return [(block.name, block.input) for block in message.content if block.type == "tool_use"]


CALLS: dict[str, Callable[[Any, list[dict[str, Any]]], list[tuple[str, Any]]]] = {
    "openai-chat": chat_calls, "openai-responses": responses_calls, "anthropic": anthropic_calls}
"""Each protocol's SDK helper, run on a client: the calls of the final message."""


def client_for(protocol: str, base_url: str, **options: Any) -> Any:
    """The official client of a protocol at ``base_url`` (``http://host:port``), no retries."""
    if protocol == "anthropic":
        return anthropic.Anthropic(api_key="test-key", base_url=base_url, max_retries=0, **options)
    return openai.OpenAI(api_key="test-key", base_url=base_url + "/v1", max_retries=0, **options)


def sdk_harness(protocol: str, tools: list[dict[str, Any]]) -> SDKHarness:
    """The protocol's SDK helper as a harness: each call streams the variant's bytes."""
    body = _Stream(httpx2 if protocol == "anthropic" else httpx)
    client = client_for(protocol, "http://sdk.test", http_client=body.client())

    def harness(chunks: Iterator[bytes]) -> list[tuple[str, Any]]:
        body.pieces = chunks
        return CALLS[protocol](client, tools)

    return harness


def openai_chat_harness(tools: list[dict[str, Any]]) -> SDKHarness:
    return sdk_harness("openai-chat", tools)


def openai_responses_harness(tools: list[dict[str, Any]]) -> SDKHarness:
    return sdk_harness("openai-responses", tools)


def anthropic_harness(tools: list[dict[str, Any]]) -> SDKHarness:
    return sdk_harness("anthropic", tools)
