"""The harness gate: its order, each refusal reason, empty arguments per protocol, execution of
the demo tools, and the lenient harness's contrast marks."""

from __future__ import annotations

import json

import pytest
from callscope.core.demo_tools import DEMO_TOOL_DEFINITIONS
from callscope.core.engine import CallStep, DecisionStep, Engine
from callscope.core.events import TurnEnded
from callscope.core.gate.rules import RULES
from callscope.core.replay import replay
from callscope.core.tools import ToolSet

TOOLS = ToolSet(DEMO_TOOL_DEFINITIONS)


def anthropic(name: str, fragments: list[str], *, stop: str = "tool_use", end: bool = True,
              error: str | None = None, block_stop: bool = True) -> bytes:
    """A minimal Anthropic Messages stream with one tool_use block."""
    def ev(kind: str, payload: dict) -> str:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **payload})}\n\n"

    out = [ev("message_start", {"message": {"id": "msg_1", "type": "message", "role": "assistant",
                                             "content": [], "usage": {"output_tokens": 1}}}),
           ev("content_block_start", {"index": 0, "content_block": {
               "type": "tool_use", "id": "toolu_1", "name": name, "input": {}}})]
    out += [ev("content_block_delta", {"index": 0, "delta": {"type": "input_json_delta",
                                                             "partial_json": f}}) for f in fragments]
    if block_stop:
        out.append(ev("content_block_stop", {"index": 0}))
    if error:
        out.append(ev("error", {"error": {"type": "overloaded_error", "message": error}}))
    if end:
        out.append(ev("message_delta", {"delta": {"stop_reason": stop}, "usage": {"output_tokens": 9}}))
        out.append(ev("message_stop", {}))
    return "".join(out).encode()


def decide(data: bytes, tools: ToolSet = TOOLS, protocol: str | None = None):
    decisions = [s.decision for s in replay([(0.0, data)], tools=tools, protocol=protocol)
                 if isinstance(s, DecisionStep)]
    assert len(decisions) == 1
    return decisions[0]


@pytest.mark.parametrize("stream, action, reason", [
    (anthropic("lookup_demo_value", ['{"key": "Obj', 'ective"}']), "execute", None),
    (anthropic("lookup_demo_value", ['{"key": "Obj'], end=False, block_stop=False), "refuse", "truncated"),
    (anthropic("lookup_demo_value", ['{"key": "Objective"}'], end=False), "refuse", "truncated"),
    (anthropic("lookup_demo_value", ['{"key": "Obj'], stop="max_tokens", block_stop=False),
     "refuse", "truncated"),
    (anthropic("lookup_demo_value", ['{"key": "Objective"}'], error="Overloaded"),
     "refuse", "provider_error"),
    (anthropic("lookup_demo_value", ['{"key": "Obj']), "refuse", "invalid_json"),
    (anthropic("lookup_demo_value", ['{"key": "Objective"} {}']), "refuse", "invalid_json"),
    (anthropic("lookup_demo_value", ['{"key": 5}']), "refuse", "schema"),
    (anthropic("lookup_demo_value", ['["Objective"]']), "refuse", "schema"),
    (anthropic("launch_rockets", ['{"count": 3}']), "refuse", "unknown_tool"),
    # Order: the earlier check wins when several would refuse.
    (anthropic("launch_rockets", ['{"count": 3'], end=False), "refuse", "truncated"),
    (anthropic("launch_rockets", ['{"count": 3']), "refuse", "invalid_json"),
    (anthropic("lookup_demo_value", ['{"key": 5']), "refuse", "invalid_json"),
])
def test_gate_reasons_and_order(stream, action, reason):
    decision = decide(stream)
    assert (decision.action, decision.reason) == (action, reason), decision.detail


def test_gate_table_is_in_the_documented_order():
    assert [rule.id for rule in RULES] == [
        "limit", "failed", "no-terminal", "stop-cut", "tokens-spent", "not-closed", "call-cut",
        "disputed", "unreadable", "json", "depth", "not-object", "ambiguous-tool", "schema", "server-tool",
        "unknown-tool"]


def test_every_refusal_names_the_rule_that_fired():
    decision = decide(anthropic("launch_rockets", ['{"count": 3'], end=False))
    assert (decision.reason, decision.rule) == ("truncated", "no-terminal")
    decision = decide(anthropic("launch_rockets", ['{"count": 3']))
    assert (decision.reason, decision.rule) == ("invalid_json", "json")
    decision = decide(anthropic("lookup_demo_value", ['{"key": "Objective"}']))
    assert (decision.action, decision.rule) == ("execute", None)


def test_schema_refusal_names_the_path():
    decision = decide(anthropic("delete_demo_file", ['{"path": "a", "dry_run": "yes"}']))
    assert decision.reason == "schema"
    assert decision.detail.startswith("$.dry_run:")


def test_execute_runs_the_demo_tool_and_logs_its_result():
    decision = decide(anthropic("lookup_demo_value", ['{"key": "Objective"}']))
    assert decision.ran == "demo"
    assert decision.arguments == {"key": "Objective"}
    assert decision.result["found"] is True


def test_other_tools_are_a_dry_run():
    tools = ToolSet([{"name": "get_weather", "input_schema": {"type": "object"}}])
    decision = decide(anthropic("get_weather", ['{"city": "Paris"}']), tools)
    assert (decision.action, decision.ran, decision.result) == ("execute", "dry-run", None)


def test_a_tool_defined_twice_with_different_schemas_is_refused_and_the_same_twice_is_one():
    """Which schema a call to a name declared twice must satisfy is unknown (before, the last
    definition silently replaced the first): refused by its own rule, naming both places; the
    other tools, and the same definition given twice, decide as before."""
    loose = {"name": "get_weather", "input_schema": {"type": "object"}}
    strict = {"name": "get_weather", "input_schema": {"type": "object", "required": ["city"]}}
    other = {"name": "ping_demo", "input_schema": {"type": "object"}}
    for tools in ([strict, other, loose], [loose, other, strict]):
        decision = decide(anthropic("get_weather", ['{"town": "Paris"}']), ToolSet(tools))
        assert (decision.action, decision.reason, decision.rule) == (
            "refuse", "unknown_tool", "ambiguous-tool")
        assert "'get_weather' is defined twice with different schemas (tools[0] and tools[2])" \
            in decision.detail
        assert decide(anthropic("ping_demo", ["{}"]), ToolSet(tools)).action == "execute"
    assert decide(anthropic("get_weather", ['{"town": "Paris"}']),
                  ToolSet([loose, dict(loose)])).action == "execute"
    assert ToolSet([loose, other, strict, strict]).ambiguous == {
        "get_weather": "tools[0] and tools[2] and tools[3]"}


def test_anthropic_empty_partial_json_means_no_arguments_and_says_so():
    tools = ToolSet([{"name": "ping_demo", "input_schema": {"type": "object"}}])
    decision = decide(anthropic("ping_demo", [""]), tools)
    assert decision.action == "execute" and decision.arguments == {}
    assert "empty argument text means no arguments" in decision.detail


def chat(arguments: str, *, finish: str = "tool_calls", done: bool = True) -> bytes:
    opening = {"index": 0, "id": "call_1", "type": "function",
               "function": {"name": "ping_demo", "arguments": ""}}
    fragment = {"index": 0, "function": {"arguments": arguments}}
    chunks = [
        {"choices": [{"index": 0, "delta": {"tool_calls": [opening]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [fragment]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
    ]
    body = "".join(f"data: {json.dumps({'object': 'chat.completion.chunk', **c})}\n\n" for c in chunks)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


PING_TOOLS = ToolSet([{"type": "function",
                       "function": {"name": "ping_demo", "parameters": {"type": "object"}}}])


def test_openai_chat_empty_arguments_are_invalid_json():
    tools = PING_TOOLS
    decision = decide(chat(""), tools)
    assert (decision.action, decision.reason) == ("refuse", "invalid_json")
    assert "empty argument text" in decision.detail


@pytest.mark.parametrize("arguments, values", [
    ('{"a": 1}{"a": 2}', 2), ('{"a": 1} {"b": 2}\n[3]', 3), ("1 2", 2)])
def test_two_json_values_back_to_back_are_refused_and_said_so(arguments, values):
    """A server that gives parallel calls one index or id streams their arguments into one call
    (vLLM, Ollama behind gateways): refused as invalid JSON, and the detail names the likely
    cause instead of orjson's column."""
    decision = decide(chat(arguments), PING_TOOLS)
    assert (decision.action, decision.reason) == ("refuse", "invalid_json")
    assert decision.detail.startswith(f"{values} JSON values back to back"), decision.detail


def test_a_long_run_of_values_is_counted_up_to_a_bound():
    decision = decide(chat("{}" * 20), PING_TOOLS)
    assert decision.detail.startswith("9 or more JSON values back to back"), decision.detail


@pytest.mark.parametrize("arguments", ['{"a": 1}{"a": 2', '{"a": 1}x', '{"a": 1}}',
                                       '{"a": NaN}{"b": 2}', "NaN Infinity"])
def test_a_value_then_anything_else_keeps_the_parser_message(arguments):
    decision = decide(chat(arguments), PING_TOOLS)
    assert decision.detail.startswith("strict parse failed: "), decision.detail


def test_chat_finish_reason_without_done_is_not_enough():
    tools = PING_TOOLS
    decision = decide(chat('{"a": 1}', done=False), tools)
    assert (decision.action, decision.reason) == ("refuse", "truncated")
    assert decision.contrast, "a lenient harness executes on finish_reason alone"


def test_chat_length_is_truncated_even_with_done():
    tools = PING_TOOLS
    assert decide(chat('{"a": 1}', finish="length"), tools).reason == "truncated"


def test_lenient_contrast_shows_the_dropped_dry_run():
    stream = anthropic("delete_demo_file", ['{"path": "notes/todo.txt", "dry', '_run": tr'],
                       end=False, block_stop=False)
    decision = decide(stream)
    assert (decision.action, decision.reason) == ("refuse", "truncated")
    assert decision.contrast
    assert decision.lenient.arguments == {"path": "notes/todo.txt"}
    assert decision.lenient.dropped == ("dry_run",)


def test_lenient_substitutes_empty_object_for_garbage():
    decision = decide(anthropic("lookup_demo_value", ["}}garbage"]))
    assert decision.reason == "invalid_json"
    assert (decision.lenient.action, decision.lenient.how, decision.lenient.arguments) == (
        "execute", "empty-object", {})


def test_decisions_cite_the_terminal_frame_and_signal():
    engine = Engine(tools=TOOLS)
    steps = engine.feed(anthropic("lookup_demo_value", ['{"key": "Objective"}'])) + engine.close()
    terminal = next(s.event for s in steps if isinstance(s, CallStep) and isinstance(s.event, TurnEnded))
    decision = next(s.decision for s in steps if isinstance(s, DecisionStep))
    assert decision.frame == terminal.frame
    assert decision.signal == "message_stop"


def test_truncated_decision_cites_the_last_frame_received():
    decision = decide(anthropic("lookup_demo_value", ['{"key": "Obj'], end=False, block_stop=False))
    assert decision.signal is None
    assert decision.frame == 2  # message_start, block start, the one delta


def test_nothing_executes_before_the_terminal_step():
    engine = Engine(tools=TOOLS)
    data = anthropic("lookup_demo_value", ['{"key": ', '"Objective"}'])
    seen_terminal = False
    for i in range(len(data)):  # byte by byte: the strongest interleaving of steps
        for step in engine.feed(data[i:i + 1]):
            if isinstance(step, CallStep) and isinstance(step.event, TurnEnded):
                seen_terminal = True
            if isinstance(step, DecisionStep) and step.decision.action == "execute":
                assert seen_terminal
    assert seen_terminal
    assert engine.pipeline.decisions["block:0"].action == "execute"
