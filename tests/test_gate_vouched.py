"""The gate runs only what the provider vouched for: nothing after the turn's terminal signal,
no call the provider never closed (or said was incomplete), no call whose final copy disagrees
with its fragments. Found by review: each of these used to execute."""

from __future__ import annotations

import json
import random

import pytest
from callscope.core.demo_tools import DEMO_TOOL_DEFINITIONS
from callscope.core.engine import DecisionStep, Engine
from callscope.core.replay import Chunking, replay
from callscope.core.synth import PROTOCOLS, Text, ToolCall, Turn, encode
from callscope.core.tools import ToolSet

TOOLS = ToolSet(DEMO_TOOL_DEFINITIONS)
FIRST = Turn((ToolCall("lookup_demo_value", '{"key":"Objective"}'),))
LATE = Turn((Text("more"), ToolCall("lookup_demo_value", '{"key":"Owner"}'),
             ToolCall("delete_demo_file", '{"path":"notes/todo.txt","dry_run":false}')))


def decisions(data: bytes, chunking: str = "whole") -> dict[str, tuple[str, str | None]]:
    steps = replay([(0.0, data)], tools=TOOLS, chunking=Chunking.parse(chunking))
    return {s.decision.call: (s.decision.action, s.decision.reason)
            for s in steps if isinstance(s, DecisionStep)}


def engine(data: bytes) -> Engine:
    run = Engine(None, TOOLS)
    run.feed(data)
    run.close()
    return run


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("chunking", ["whole", "bytes:1", "random:3"])
def test_what_follows_the_terminal_signal_changes_nothing(protocol: str, chunking: str) -> None:
    """A whole turn, then the frames of another: its calls (new ones, and changes to the first
    turn's, whose keys they share) are reported, never read into the turn, never executed."""
    first = encode(protocol, FIRST, random.Random(1))
    data = first + encode(protocol, LATE, random.Random(2))
    alone = decisions(first)
    assert list(alone.values()) == [("execute", None)]
    assert decisions(data, chunking) == alone
    late = engine(data)
    assert [c.text for c in late.state.calls.values()] == ['{"key":"Objective"}']
    assert "call_after_terminal" in late.state.anomaly_counts


def chat_chunk(delta: dict, finish: str | None = None) -> str:
    return "data: " + json.dumps({"id": "c", "object": "chat.completion.chunk", "choices": [
        {"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n"


def chat_call(index: int, arguments: str, **ident: str) -> str:
    return chat_chunk({"tool_calls": [{"index": index, **ident,
                                       "function": {"arguments": arguments, **(
                                           {"name": ident.pop("name")} if "name" in ident
                                           else {})}}]})


def test_a_change_after_the_terminal_leaves_the_decided_text() -> None:
    """A closing brace after [DONE] is not read: the call was refused on the text it had at the
    terminal, and its record shows that text, not one that would have parsed."""
    data = (chat_call(0, "", id="call_1", type="function", name="lookup_demo_value")
            + chat_call(0, '{"key":"Objective"') + chat_chunk({}, "tool_calls")
            + "data: [DONE]\n\n" + chat_call(0, "}") + "data: [DONE]\n\n").encode()
    assert decisions(data) == {"choice0/call0": ("refuse", "invalid_json")}
    (call,) = engine(data).state.calls.values()
    assert call.text == '{"key":"Objective"'
    assert call.draft.value == "incomplete"


def anthropic_stream(*blocks: str, stops: bool = True) -> bytes:
    def ev(kind: str, **payload: object) -> str:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **payload})}\n\n"
    out = [ev("message_start", message={"id": "m", "type": "message", "role": "assistant",
                                        "content": [], "usage": {"output_tokens": 1}})]
    for i, text in enumerate(blocks):
        out += [ev("content_block_start", index=i, content_block={
            "type": "tool_use", "id": f"t{i}", "name": "lookup_demo_value", "input": {}}),
            ev("content_block_delta", index=i, delta={"type": "input_json_delta",
                                                      "partial_json": text})]
        if stops:
            out.append(ev("content_block_stop", index=i))
    out += [ev("message_delta", delta={"stop_reason": "tool_use"}, usage={"output_tokens": 2}),
            ev("message_stop")]
    return "".join(out).encode()


def test_a_block_the_provider_never_stopped_is_refused_as_truncated() -> None:
    whole = '{"key":"Objective"}'
    assert decisions(anthropic_stream(whole)) == {"block:0": ("execute", None)}
    assert decisions(anthropic_stream(whole, stops=False)) == {"block:0": ("refuse", "truncated")}


def interactions_stream(stop: bool) -> bytes:
    def ev(kind: str, **payload: object) -> str:
        return f"event: {kind}\ndata: {json.dumps({**payload, 'event_type': kind})}\n\n"
    out = [ev("interaction.created", interaction={"id": "i", "status": "in_progress"}),
           ev("step.start", index=0, step={"id": "s", "type": "function_call",
                                           "name": "lookup_demo_value", "arguments": {}}),
           ev("step.delta", index=0, delta={"type": "arguments_delta",
                                            "arguments": '{"key":"Objective"}'})]
    if stop:
        out.append(ev("step.stop", index=0))
    out += [ev("interaction.completed", interaction={"id": "i", "status": "requires_action"}),
            "event: done\ndata: [DONE]\n\n"]
    return "".join(out).encode()


def test_a_step_the_provider_never_stopped_is_refused_as_truncated() -> None:
    assert decisions(interactions_stream(True)) == {"step:0": ("execute", None)}
    assert decisions(interactions_stream(False)) == {"step:0": ("refuse", "truncated")}


def responses_stream(status: str = "completed", final: str = '{"key":"Objective"}') -> bytes:
    def ev(kind: str, **payload: object) -> str:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **payload})}\n\n"
    item = {"id": "fc_1", "type": "function_call", "call_id": "c1", "name": "lookup_demo_value"}
    return "".join([
        ev("response.created", response={"id": "r", "status": "in_progress", "output": []}),
        ev("response.output_item.added", output_index=0,
           item={**item, "status": "in_progress", "arguments": ""}),
        ev("response.function_call_arguments.delta", item_id="fc_1", output_index=0,
           delta='{"key":"Objective"}'),
        ev("response.function_call_arguments.done", item_id="fc_1", output_index=0,
           arguments='{"key":"Objective"}'),
        ev("response.output_item.done", output_index=0,
           item={**item, "status": status, "arguments": final}),
        ev("response.completed", response={"id": "r", "status": "completed", "output": []}),
    ]).encode()


def test_responses_items_the_provider_did_not_vouch_for_are_refused() -> None:
    assert decisions(responses_stream()) == {"item:fc_1": ("execute", None)}
    assert decisions(responses_stream("incomplete")) == {"item:fc_1": ("refuse", "truncated")}
    # Its two final copies disagree: which one the provider meant is unknown.
    assert decisions(responses_stream(final='{"key":"Owner"}')) == {
        "item:fc_1": ("refuse", "provider_error")}


def vertex_stream(*parts: dict) -> bytes:
    chunks = [{"candidates": [{"content": {"role": "model", "parts": [p]}}]} for p in parts]
    chunks.append({"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]},
                                   "finishReason": "STOP"}]})
    return "".join(f"data: {json.dumps(c)}\r\n\r\n" for c in chunks).encode()


def fc(**call: object) -> dict:
    return {"functionCall": call}


def test_a_vertex_call_still_continuing_at_its_close_is_refused() -> None:
    name = fc(name="lookup_demo_value", willContinue=True)
    ended = {"jsonPath": "$.key", "stringValue": "Objective"}
    # A real recording's shape: no empty terminator, but its last part ends the call.
    assert decisions(vertex_stream(name, fc(partialArgs=[ended]))) == {
        "call:0": ("execute", None)}
    # The last part still says willContinue: more of the call was to come.
    assert decisions(vertex_stream(name, fc(partialArgs=[ended], willContinue=True))) == {
        "call:0": ("refuse", "truncated")}
    # The string's last piece said willContinue: "Obj" was not the whole value.
    open_string = {"jsonPath": "$.key", "stringValue": "Obj", "willContinue": True}
    assert decisions(vertex_stream(name, fc(partialArgs=[open_string]))) == {
        "call:0": ("refuse", "truncated")}
