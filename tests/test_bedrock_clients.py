"""Real clients, real bytes: boto3's bedrock-runtime client (botocore's own event-stream parser
and SigV4 signing, dummy credentials) and the anthropic SDK's Bedrock client read ``callscope
serve``'s ConverseStream and InvokeModelWithResponseStream on loopback, and get the calls the
engine reads from the same bytes; an exception message inside the HTTP 200, an HTTP error and a
cut stream fail in the client as they fail with Bedrock."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from callscope.core.demo_tools import DEMO_TOOL_DEFINITIONS
from callscope.core.engine import Engine
from callscope.core.framing import decode_all
from callscope.core.session import open_input
from callscope.core.tools import ToolSet
from loopback import serving

boto3 = pytest.importorskip("boto3")
from botocore.config import Config  # noqa: E402
from botocore.exceptions import ClientError, EventStreamError  # noqa: E402

SESSIONS = Path(__file__).resolve().parent.parent / "sessions"
CONVERSE = SESSIONS / "bedrock-converse" / "parallel_calls.jsonl"
CONVERSE_ERROR = SESSIONS / "bedrock-converse" / "provider_error.jsonl"
INVOKE = SESSIONS / "bedrock-invoke" / "parallel_calls.jsonl"
MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"


def client(url: str, fault: str | None = None) -> Any:
    bedrock = boto3.client("bedrock-runtime", endpoint_url=url, region_name="us-east-1",
                           aws_access_key_id="AKIAEXAMPLE", aws_secret_access_key="dummy",
                           config=Config(retries={"max_attempts": 1}))
    if fault is not None:
        def add_fault(request: Any, **_: Any) -> None:
            request.headers["x-callscope-fault"] = fault
        bedrock.meta.events.register("before-sign.bedrock-runtime.*", add_fault)
    return bedrock


def engine_calls(path: Path) -> list[tuple[str | None, Any]]:
    engine = Engine()
    for chunk in open_input(str(path)).chunks():
        engine.feed(chunk.data)
    engine.close()
    return [(c.name, orjson.loads(c.text or "{}")) for c in engine.state.calls.values()]


def converse(bedrock: Any) -> tuple[list[tuple[str, Any]], str | None, dict[str, Any]]:
    """What an agent loop assembles from boto3's events: each toolUse with its parsed input."""
    response = bedrock.converse_stream(modelId=MODEL, messages=[
        {"role": "user", "content": [{"text": "hi"}]}])
    blocks: dict[int, dict[str, Any]] = {}
    stop, usage = None, {}
    for event in response["stream"]:
        if "contentBlockStart" in event:
            start = event["contentBlockStart"]
            use = start["start"]["toolUse"]
            blocks[start["contentBlockIndex"]] = {"name": use["name"], "input": ""}
        elif "contentBlockDelta" in event:
            delta = event["contentBlockDelta"]
            if "toolUse" in delta["delta"]:
                blocks[delta["contentBlockIndex"]]["input"] += delta["delta"]["toolUse"]["input"]
        elif "messageStop" in event:
            stop = event["messageStop"]["stopReason"]
        elif "metadata" in event:
            usage = event["metadata"]["usage"]
    calls = [(b["name"], orjson.loads(b["input"] or "{}")) for _, b in sorted(blocks.items())]
    return calls, stop, usage


def test_boto3_converse_stream_reads_the_calls_the_engine_reads() -> None:
    with serving(CONVERSE) as url:
        calls, stop, usage = converse(client(url))
    assert calls == engine_calls(CONVERSE) and len(calls) == 3
    assert stop == "tool_use" and usage["totalTokens"] == usage["inputTokens"] + usage["outputTokens"]


def test_an_exception_message_inside_the_200_raises_in_boto3() -> None:
    with serving(CONVERSE_ERROR) as url:
        with pytest.raises(EventStreamError) as failure:
            converse(client(url))
    assert failure.value.response["Error"]["Code"] == "modelStreamErrorException"


def test_an_http_error_is_a_client_error_with_the_aws_code() -> None:
    with serving(CONVERSE) as url:
        with pytest.raises(ClientError) as failure:
            converse(client(url, fault="status=429"))
    assert failure.value.response["Error"]["Code"] == "ThrottlingException"
    assert failure.value.response["ResponseMetadata"]["HTTPStatusCode"] == 429


def test_a_clean_close_after_six_frames_ends_boto3_quietly_and_the_gate_refuses() -> None:
    with serving(CONVERSE) as url:
        calls, stop, _ = converse(client(url, fault="frames=6,end=clean"))
    # boto3 ends the iteration without a word: an agent loop holds a whole call and the start of
    # another, and no stop reason (it must notice the missing messageStop itself).
    assert stop is None and calls[0] == ("lookup_demo_value", {"key": "Owner"}) and len(calls) == 2
    data = b"".join(c.data for c in open_input(str(CONVERSE)).chunks())
    prefix = data[:decode_all(data, "aws-eventstream")[5].end]
    engine = Engine("bedrock-converse", ToolSet(DEMO_TOOL_DEFINITIONS))
    engine.feed(prefix)
    engine.close()
    assert {(d.action, d.reason) for d in engine.pipeline.decisions.values()} == \
        {("refuse", "truncated")}


def test_a_connection_closed_inside_the_body_raises_in_boto3() -> None:
    with serving(CONVERSE) as url:
        with pytest.raises(Exception, match="ended prematurely"):
            converse(client(url, fault="frames=6"))


def test_boto3_invoke_model_with_response_stream_carries_anthropic_events() -> None:
    with serving(INVOKE) as url:
        response = client(url).invoke_model_with_response_stream(modelId=MODEL, body=b"{}")
        events = [orjson.loads(e["chunk"]["bytes"]) for e in response["body"] if "chunk" in e]
    inputs: dict[int, str] = {}
    names: dict[int, str] = {}
    for event in events:
        if event["type"] == "content_block_start" and event["content_block"]["type"] == "tool_use":
            names[event["index"]] = event["content_block"]["name"]
        if event["type"] == "content_block_delta" and event["delta"]["type"] == "input_json_delta":
            inputs[event["index"]] = inputs.get(event["index"], "") + event["delta"]["partial_json"]
    calls = [(names[i], orjson.loads(inputs[i])) for i in sorted(names)]
    assert calls == engine_calls(INVOKE) and events[-1]["type"] == "message_stop"


def test_the_anthropic_bedrock_client_reads_the_invoke_stream() -> None:
    anthropic = pytest.importorskip("anthropic")
    with serving(INVOKE) as url:
        bedrock = anthropic.AnthropicBedrock(base_url=url, aws_region="us-east-1",
                                             aws_access_key="AKIAEXAMPLE",
                                             aws_secret_key="dummy", max_retries=0)
        with bedrock.messages.stream(model=MODEL, max_tokens=100, messages=[]) as stream:
            message = stream.get_final_message()
    assert [(b.name, b.input) for b in message.content if b.type == "tool_use"] == \
        engine_calls(INVOKE)
