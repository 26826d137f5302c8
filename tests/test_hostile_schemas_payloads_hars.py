"""Hostile inputs that raised a traceback: a tool schema validation cannot finish (a schema that
refers to itself; a recursive one over deeply nested arguments), Bedrock ConverseStream events
whose payload is not an object, and HAR headers and timings of the wrong type or size. Each
must give a decision or a clean exit, never a traceback; a call whose schema cannot be applied
is refused, never run unchecked."""

from __future__ import annotations

import json
import pathlib
import random

import pytest
from callscope.core.engine import Engine
from callscope.core.session import open_input
from callscope.core.synth import ToolCall, Turn, encode
from callscope.core.synth_framed import one_frame
from callscope.core.tools import ToolSet
from callscope.tui.cli import main
from test_importers import entry, write_har

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _decide(protocol: str, data: bytes, tools: ToolSet | None = None) -> Engine:
    engine = Engine(protocol, tools)
    engine.push(data)
    engine.close()
    return engine


def _nested(depth: int) -> str:
    return '{"z": ' + "[" * depth + "]" * depth + "}"


SELF = {"$ref": "#"}
LOOPS = [SELF, {"allOf": [SELF]}, {"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"},
                                                                   "b": {"$ref": "#/$defs/a"}}}]
RECURSIVE = {"type": "object", "properties": {"z": {"$ref": "#/$defs/l"}}, "$defs": {"l": {
    "anyOf": [{"allOf": [{"anyOf": [{"type": "array", "items": {"$ref": "#/$defs/l"}}]}]}]}}}


@pytest.mark.parametrize("schema", LOOPS, ids=["ref-self", "allOf-self", "defs-loop"])
def test_a_schema_that_refers_to_itself_refuses_the_call(schema: dict) -> None:
    tools = ToolSet([{"name": "lookup", "parameters": schema}])
    data = encode("openai-chat", Turn((ToolCall("lookup", '{"key": "a"}'),)), random.Random(1))
    [decision] = _decide("openai-chat", data, tools).pipeline.decisions.values()
    assert (decision.action, decision.reason) == ("refuse", "schema")
    assert "could not be checked" in decision.detail


def test_a_recursive_schema_checks_what_it_can_and_refuses_what_it_cannot() -> None:
    tools = ToolSet([{"name": "lookup", "parameters": RECURSIVE}])
    actions = {}
    for depth in (10, 100):
        data = encode("openai-chat", Turn((ToolCall("lookup", _nested(depth)),)), random.Random(1))
        [decision] = _decide("openai-chat", data, tools).pipeline.decisions.values()
        actions[depth] = (decision.action, decision.reason)
    assert actions == {10: ("execute", None), 100: ("refuse", "schema")}


def test_the_cli_refuses_a_self_referring_tool_without_a_traceback(tmp_path, capsys) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"name": "lookup_demo_value", "parameters": SELF}]))
    session = str(ROOT / "sessions" / "demo_complete.jsonl")
    assert main(["replay", session, "--tools", str(tools), "--json"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    refused = [r for r in records if r.get("call") and r.get("action") == "refuse"
               and r.get("reason") == "schema"]
    assert refused and "could not be checked" in refused[0]["detail"]
    assert main(["check", session, "--tools", str(tools)]) == 0


def _converse(stop_payload: bytes, start_payload: bytes | None = None) -> bytes:
    frame = lambda event, payload: one_frame("bedrock-converse", event, payload)  # noqa: E731
    start = start_payload or json.dumps({"contentBlockIndex": 0, "start": {"toolUse": {
        "toolUseId": "t1", "name": "lookup"}}}).encode()
    return b"".join([
        frame("messageStart", b'{"role": "assistant"}'),
        frame("contentBlockStart", start),
        frame("contentBlockDelta", b'{"contentBlockIndex": 0, "delta": {"toolUse": '
                                   b'{"input": "{\\"key\\": \\"a\\"}"}}}'),
        frame("contentBlockStop", b'{"contentBlockIndex": 0}'),
        frame("messageStop", stop_payload),
        frame("metadata", b"null"),
    ])


@pytest.mark.parametrize("payload", [b"null", b'"x"', b"[]", b"5"])
def test_a_converse_event_whose_payload_is_not_an_object_is_an_anomaly(payload: bytes) -> None:
    engine = _decide("bedrock-converse", _converse(payload))
    codes = [a.code for a in engine.state.anomalies]
    assert codes.count("not_an_object") == 2  # (the messageStop and the metadata)
    assert not engine.state.complete  # the messageStop was not read: no terminal signal
    assert [d.action for d in engine.pipeline.decisions.values()] == ["refuse"]
    fine = _decide("bedrock-converse", _converse(b'{"stopReason": "tool_use"}'))
    assert fine.state.complete
    started = _decide("bedrock-converse", _converse(b'{"stopReason": "tool_use"}', payload))
    assert "not_an_object" in [a.code for a in started.state.anomalies]
    assert [d.action for d in started.pipeline.decisions.values()] == ["refuse"]


@pytest.mark.parametrize("where", ["request", "response"])
@pytest.mark.parametrize("headers", [5, True, "x", {"a": 1}])
def test_har_headers_of_the_wrong_type_are_no_headers(tmp_path, where: str, headers) -> None:
    e = entry()
    e[where]["headers"] = headers
    session = open_input(write_har(tmp_path / "h.har", e))
    assert session.header.source == "import:har" and list(session.chunks())
    if where == "response":
        assert not session.header.response_headers
    out = tmp_path / "out.jsonl"
    assert main(["import", str(tmp_path / "h.har"), "-o", str(out)]) == 0


def test_har_timings_that_add_up_to_infinity_are_unknown(tmp_path) -> None:
    e = entry()
    e["timings"] = {"send": 1e308, "wait": 1e308, "receive": 1e308}
    session = open_input(write_har(tmp_path / "t.har", e))
    assert all(chunk.t == 0.0 or chunk.t is None for chunk in session.chunks())
    out = tmp_path / "out.jsonl"
    assert main(["import", str(tmp_path / "t.har"), "-o", str(out)]) == 0
