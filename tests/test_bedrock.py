"""The Bedrock readers over hand-built event-stream messages: ConverseStream's blocks keyed by
contentBlockIndex (not arrival order), a tool block never stopped is cut (QUIRKS.md 23), an
exception or error message inside the 200 is a provider error, faulty frames make the turn
unreadable; InvokeModelWithResponseStream's base64 Anthropic events read as the Anthropic
reader reads them. Every stream here is synthetic (written with core/aws_eventstream.py);
tests/test_framing_aws.py holds that writer to botocore's parser."""

from __future__ import annotations

import base64
import json
from typing import Any

from callscope.core.aws_eventstream import encode_message, event_message, exception_message
from callscope.core.demo_tools import DEMO_TOOL_DEFINITIONS
from callscope.core.engine import Engine
from callscope.core.gate.codes import Code
from callscope.core.tools import ToolSet

TOOLS = ToolSet(DEMO_TOOL_DEFINITIONS)


def ev(kind: str, **payload: Any) -> bytes:
    return event_message(kind, json.dumps(payload).encode())


def run(protocol: str | None, *messages: bytes) -> Engine:
    engine = Engine(protocol, TOOLS)
    data = b"".join(messages)
    for i in range(0, len(data), 7):  # reads that ignore every message boundary
        engine.feed(data[i:i + 7])
    engine.close()
    return engine


def outcome(engine: Engine) -> list[tuple[str | None, str | None, str, str | None]]:
    return [(engine.state.calls[d.call].name, engine.state.calls[d.call].text, d.action, d.reason)
            for d in engine.pipeline.decisions.values()]


def rules(engine: Engine) -> set[str | None]:
    return {d.rule for d in engine.pipeline.decisions.values()}


def codes(engine: Engine) -> set[Code]:
    return {a.code for a in engine.state.anomalies}


def start(i: int, name: str, uid: str = "t") -> bytes:
    return ev("contentBlockStart", contentBlockIndex=i,
              start={"toolUse": {"toolUseId": f"{uid}{i}", "name": name}})


def delta(i: int, fragment: str) -> bytes:
    return ev("contentBlockDelta", contentBlockIndex=i, delta={"toolUse": {"input": fragment}})


def stop(i: int) -> bytes:
    return ev("contentBlockStop", contentBlockIndex=i)


END = (ev("messageStop", stopReason="tool_use"),
       ev("metadata", usage={"inputTokens": 3, "outputTokens": 4, "totalTokens": 7},
          metrics={"latencyMs": 9}))


def test_interleaved_blocks_are_keyed_by_their_index_not_by_arrival() -> None:
    engine = run("bedrock-converse", ev("messageStart", role="assistant"),
                 ev("contentBlockDelta", contentBlockIndex=0, delta={"text": "Checking."}),
                 stop(0), start(2, "add_demo_numbers"), start(1, "lookup_demo_value"),
                 delta(2, '{"a": 1, '), delta(1, '{"key":'), delta(2, '"b": 2}'),
                 delta(1, '"Owner"}'), stop(1), stop(2), *END)
    assert outcome(engine) == [("add_demo_numbers", '{"a": 1, "b": 2}', "execute", None),
                               ("lookup_demo_value", '{"key":"Owner"}', "execute", None)]
    assert engine.state.text["text"] == ["Checking."] and engine.state.usage["totalTokens"] == 7


def test_a_gateway_that_never_sends_content_block_stop_runs_nothing() -> None:
    engine = run("bedrock-converse", ev("messageStart", role="assistant"),
                 start(0, "lookup_demo_value"), delta(0, '{"key":"Owner"}'), *END)
    assert Code.BLOCK_NOT_STOPPED in codes(engine)
    assert [d[2] for d in outcome(engine)] == ["refuse"]


def test_an_exception_message_inside_the_200_is_a_provider_error() -> None:
    engine = run(None, ev("messageStart", role="assistant"), start(0, "lookup_demo_value"),
                 delta(0, '{"key":"Own'),
                 exception_message("throttlingException", b'{"message":"Too many tokens"}'))
    assert engine.state.protocol == "bedrock-converse"
    assert [(e.message, e.code) for e in engine.state.errors] == \
        [("Too many tokens", "throttlingException")]
    assert outcome(engine)[0][2:] == ("refuse", "provider_error")


def test_an_error_message_reads_its_code_and_text_from_headers() -> None:
    error = encode_message(((":message-type", "error"), (":error-code", "InternalFailure"),
                            (":error-message", "boom")), b"")
    engine = run("bedrock-converse", ev("messageStart", role="assistant"), error)
    assert [(e.message, e.code) for e in engine.state.errors] == [("boom", "InternalFailure")]


def test_a_corrupt_message_makes_the_turn_unreadable_though_the_rest_is_whole() -> None:
    bad = bytearray(ev("contentBlockDelta", contentBlockIndex=5, delta={"text": "x"}))
    bad[30] ^= 0x01
    engine = run("bedrock-converse", ev("messageStart", role="assistant"),
                 start(0, "lookup_demo_value"), delta(0, '{"key":"Owner"}'), bytes(bad), stop(0),
                 *END)
    assert Code.FRAME_CHECKSUM in codes(engine)
    assert outcome(engine)[0][2] == "refuse" and rules(engine) == {"unreadable"}


def test_stop_reasons_from_the_service_model() -> None:
    for reason, action in (("max_tokens", "truncated"), ("guardrail_intervened", "failed"),
                           ("malformed_tool_use", "failed"), ("surprise", "failed")):
        engine = run("bedrock-converse", ev("messageStart", role="assistant"),
                     start(0, "lookup_demo_value"), delta(0, '{"key":"Owner"}'), stop(0),
                     ev("messageStop", stopReason=reason))
        assert outcome(engine)[0][2] == "refuse", reason
        assert engine.state.stop is not None
        assert (engine.state.stop.cut, engine.state.stop.failed) == \
            (action == "truncated", action == "failed"), reason
    assert Code.UNKNOWN_STOP_REASON in codes(engine)


def chunk(event: dict[str, Any]) -> bytes:
    return event_message("chunk", json.dumps(
        {"bytes": base64.b64encode(json.dumps(event).encode()).decode()}).encode())


INVOKE = (
    chunk({"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": 3}}}),
    chunk({"type": "content_block_start", "index": 0,
           "content_block": {"type": "tool_use", "id": "toolu_1", "name": "lookup_demo_value",
                             "input": {}}}),
    chunk({"type": "content_block_delta", "index": 0,
           "delta": {"type": "input_json_delta", "partial_json": '{"key":"Owner"}'}}),
    chunk({"type": "content_block_stop", "index": 0}),
    chunk({"type": "message_delta", "delta": {"stop_reason": "tool_use"},
           "usage": {"output_tokens": 5}}),
    chunk({"type": "message_stop", "amazon-bedrock-invocationMetrics": {"inputTokenCount": 3}}),
)


def test_invoke_reads_the_anthropic_events_inside_and_detects_itself() -> None:
    engine = run(None, *INVOKE)
    assert engine.state.protocol == "bedrock-invoke"
    assert outcome(engine) == [("lookup_demo_value", '{"key":"Owner"}', "execute", None)]
    assert engine.state.terminal is not None and engine.state.terminal.signal == "message_stop"


def test_invoke_without_message_stop_or_with_bad_bytes_runs_nothing() -> None:
    assert outcome(run("bedrock-invoke", *INVOKE[:-1]))[0][2] == "refuse"
    bad = event_message("chunk", b'{"bytes": "not base64!"}')
    engine = run("bedrock-invoke", *INVOKE[:3], bad, *INVOKE[3:])
    assert Code.NOT_JSON in codes(engine) and rules(engine) == {"unreadable"}


def test_an_invoke_exception_is_an_anthropic_error() -> None:
    engine = run("bedrock-invoke", *INVOKE[:3], exception_message(
        "modelStreamErrorException", b'{"message":"overloaded","originalStatusCode":529}'))
    assert [(e.message, e.code) for e in engine.state.errors] == \
        [("overloaded", "modelStreamErrorException")]
    assert outcome(engine)[0][2:] == ("refuse", "provider_error")
