"""The protocol registry: detection asks each spec and answers exactly what the if-chain it
replaced answered, over every frame of every recording; the registry keeps its old interface;
detection imports no reader."""

from __future__ import annotations

import pathlib
import subprocess
import sys
from typing import Any

import orjson
import pytest
from callscope.core.detect import detect
from callscope.core.frame import Frame
from callscope.core.framing import SniffingDecoder
from callscope.core.providers import (
    DETECTION,
    PROTOCOLS,
    SPECS,
    UnknownProtocol,
    reader_for,
    spec_for,
)
from callscope.core.providers.specs import DETECTION_ORDER, REGISTERED
from callscope.core.session import open_input
from callscope.core.sse import SSEDecoder

ROOT = pathlib.Path(__file__).parent.parent

# -- the if-chain detection was before the specs, kept verbatim as the reference -------------

_ANTHROPIC_TYPES = frozenset({
    "message_start", "message_delta", "message_stop", "content_block_start",
    "content_block_delta", "content_block_stop",
})
_GENERATE_KEYS = ("candidates", "promptFeedback", "usageMetadata", "modelVersion")


def chained(frame: Frame) -> str | None:
    if not frame.dispatch:
        return None
    event = frame.event or ""
    if event.startswith("response."):
        return "openai-responses"
    if event in _ANTHROPIC_TYPES:
        return "anthropic"
    try:
        payload: Any = orjson.loads(frame.data)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(payload, dict):
        return None
    kind = payload.get("type")
    if not isinstance(kind, str):
        kind = None
    if "event_type" in payload:
        return "gemini-interactions"
    if isinstance(kind, str) and kind.startswith("response."):
        return "openai-responses"
    if kind in _ANTHROPIC_TYPES:
        return "anthropic"
    if payload.get("object") == "chat.completion.chunk" or "choices" in payload:
        return "openai-chat"
    if any(key in payload for key in _GENERATE_KEYS):
        return "gemini-generate"
    return None


def recordings() -> list[pathlib.Path]:
    found = [p for folder in ("tests/fixtures", "sessions") for p in (ROOT / folder).rglob("*")
             if p.is_file() and p.suffix in (".jsonl", ".sse")]
    return sorted(found + list((ROOT / "tests/adversarial").glob("*.sse")))


def framed(path: pathlib.Path) -> tuple[str | None, list[Frame]]:
    """The recording's frames, framed as a replay frames it (sniffed: SSE, event stream, NDJSON)."""
    decoder = SniffingDecoder()
    frames = [f for chunk in open_input(str(path)).chunks() for f in decoder.feed(chunk.data)]
    frames += decoder.close()
    return decoder.framing, frames


def test_there_are_recordings_to_compare() -> None:
    assert len(recordings()) > 150
    assert sum(1 for p in recordings() if p.parent.name in FRAMED) >= 30


# The if-chain knew the SSE protocols only; the protocols framed otherwise are held to their
# folder's name below.
FRAMED = {"bedrock-converse": "aws-eventstream", "bedrock-invoke": "aws-eventstream",
          "ollama-chat": "ndjson"}


@pytest.mark.parametrize("path", recordings(), ids=lambda p: str(p.relative_to(ROOT)))
def test_detection_answers_what_the_if_chain_answered_on_every_frame(path: pathlib.Path) -> None:
    framing, frames = framed(path)
    if path.parent.name in FRAMED:
        assert framing == FRAMED[path.parent.name]
        detected = {detect(f) for f in frames} - {None}
        assert detected == {path.parent.name}, "every frame that names a protocol names its own"
        return
    assert [detect(f) for f in frames] == [chained(f) for f in frames]


EDGES = [
    b'event: response.created\ndata: not json\n\n',  # the event field tells before parsing
    b'event: message_start\ndata: [1]\n\n',
    b'event: ping\ndata: {"type": "ping"}\n\n',
    b'data: {"type": {"a": 1}}\n\n',
    b'data: {"type": ["message_start"]}\n\n',
    b'data: {"event_type": "x", "type": "response.created", "choices": []}\n\n',
    b'data: {"type": "response.x", "choices": [], "candidates": []}\n\n',
    b'data: {"type": "content_block_stop", "choices": []}\n\n',
    b'data: {"object": "chat.completion.chunk"}\n\n',
    b'data: {"object": [], "choices": []}\n\n',
    b'data: {"choices": 1, "candidates": []}\n\n',
    b'data: {"usageMetadata": {}}\n\n',
    b'data: {"modelVersion": "x"}\n\n',
    b'data: {"error": {"message": "overloaded"}}\n\n',
    b'data: [DONE]\n\n',
    b'data: "text"\n\n',
    b': comment only\n\n',
    b'event: content_block_delta\n\n',
]


@pytest.mark.parametrize("data", EDGES)
def test_detection_edges(data: bytes) -> None:
    frames = SSEDecoder().feed(data)
    assert frames and [detect(f) for f in frames] == [chained(f) for f in frames]


def test_the_registry_keeps_its_interface() -> None:
    assert PROTOCOLS[:5] == ("openai-responses", "openai-chat", "anthropic",
                             "gemini-interactions", "gemini-generate")  # listed as always
    assert PROTOCOLS == (*SPECS, "unknown")
    assert reader_for("unknown") is None
    for name in PROTOCOLS[:-1]:
        reader = reader_for(name)
        assert reader is not None and reader.name == name
        assert spec_for(name) is SPECS[name]
    with pytest.raises(UnknownProtocol, match="one of: openai-responses, openai-chat"):
        reader_for("nope")
    with pytest.raises(UnknownProtocol):
        spec_for("unknown")


def test_detection_order_names_every_registered_spec_once() -> None:
    assert sorted(DETECTION_ORDER) == sorted(spec.name for spec in REGISTERED)
    assert [spec.name for spec in DETECTION] == list(DETECTION_ORDER)
    assert len(SPECS) == len(REGISTERED)


def test_detection_and_the_registry_import_no_reader() -> None:
    code = ("import sys, callscope.core.detect, callscope.core.providers; "
            "print(sorted(m for m in sys.modules if m.startswith('callscope.core.providers')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout
    loaded = set(eval(out))  # noqa: S307  (our own subprocess's repr of a list of names)
    readers = {f"callscope.core.providers.{spec.reader.partition(':')[0]}" for spec in REGISTERED}
    assert not loaded & readers


def test_the_emulator_reads_its_routes_and_error_bodies_from_the_specs() -> None:
    from callscope.net.capture_rules import protocol_for_path

    assert protocol_for_path("/openai/v1/responses") == "openai-responses"
    assert protocol_for_path("/v1/chat/completions") == "openai-chat"
    assert protocol_for_path("/v1/messages") == "anthropic"
    assert protocol_for_path("/v1beta/interactions") == "gemini-interactions"
    assert protocol_for_path("/v1beta/models/m:streamGenerateContent") == "gemini-generate"
    assert protocol_for_path("/v1/models/m:generateContent") is None
    # Each provider's own words for a rate limit (the emulator's bodies: tests/test_net_serve.py).
    kinds = {name: SPECS[name].error_body(429) for name in SPECS}
    assert kinds["openai-chat"]["error"]["code"] == "rate_limit_exceeded"
    assert kinds["anthropic"]["error"]["type"] == "rate_limit_error"
    assert kinds["gemini-generate"]["error"]["status"] == "RESOURCE_EXHAUSTED"
    assert SPECS["anthropic"].error_body(529)["error"]["type"] == "overloaded_error"


def test_the_live_client_reads_every_request_shape_from_the_specs() -> None:
    from callscope.net.live import PROVIDER_NAMES, PROVIDERS, build_request

    assert PROVIDER_NAMES[:5] == ("openai-responses", "openai-chat", "anthropic",
                                  "gemini-generate", "gemini-interactions")  # as always listed
    assert set(PROVIDERS) == set(SPECS)
    env = {name: "k" for spec in REGISTERED for name in spec.live.key_env}
    tool = {"name": "w", "parameters": {"type": "object", "properties": {}}}
    for spec in REGISTERED:
        request = build_request(spec.name, "m", "hi", tools=[tool], env=env)
        assert request.protocol == spec.name
        assert request.url == spec.live.default_base + spec.live.path.replace("{model}", "m")
        assert request.headers.items() >= spec.live.auth("k").items()
        group = spec.live.tool_group
        shaped = spec.live.tool({"name": "w"}, tool["parameters"])
        assert request.body["tools"] == ([{group: [shaped]}] if group else [shaped])


def test_the_emulator_asks_for_a_stream_as_each_spec_says() -> None:
    from callscope.net.serve import _not_streaming

    class Request:
        method, body = "POST", b'{"stream": true}'
        query: dict[str, list[str]] = {}

    for spec in REGISTERED:
        if spec.stream_query is None:
            assert _not_streaming(Request(), spec.name) is None  # type: ignore[arg-type]
        else:
            name, value = spec.stream_query
            assert _not_streaming(Request(), spec.name) == \
                f"add ?{name}={value} (the emulator streams SSE only)"  # type: ignore[arg-type]


def test_the_synthesizer_writes_every_registered_protocol_as_its_spec_says() -> None:
    from callscope.core import synth

    assert synth.PROTOCOLS == tuple(SPECS)
    for spec in REGISTERED:
        assert synth.NO_ARGUMENTS[spec.name] == spec.synthetic.no_arguments
        assert synth.MODELS[spec.name] == spec.synthetic.model
        assert callable(spec.encoder())
