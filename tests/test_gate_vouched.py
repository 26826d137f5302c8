"""The gate runs only what the provider vouched for: nothing after the turn's terminal signal,
no call the provider never closed (or said was incomplete), no call whose final copy disagrees
with its fragments. Found by review: each of these used to execute."""

from __future__ import annotations

import json
import pathlib
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


def responses_stream(status: str = "completed", final: str = '{"key":"Objective"}',
                     response: dict | None = None) -> bytes:
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
        ev("response.completed", response=response or {"id": "r", "status": "completed",
                                                        "output": []}),
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


# -- found by a second review -----------------------------------------------------------------

def anthropic_events(*events: tuple[str, dict]) -> bytes:
    return "".join(f"event: {kind}\ndata: {json.dumps({'type': kind, **payload})}\n\n"
                   for kind, payload in events).encode()


def test_a_block_restarted_before_its_stop_is_not_spliced_into_one_call() -> None:
    """Block 0 starts as delete_demo_file, sends half a path, restarts as another tool and
    sends the rest: the two blocks' text used to make one call, executed."""
    def start(name: str) -> tuple[str, dict]:
        return ("content_block_start", {"index": 0, "content_block": {
            "type": "tool_use", "id": name, "name": name, "input": {}}})

    def delta(text: str) -> tuple[str, dict]:
        return ("content_block_delta", {"index": 0, "delta": {"type": "input_json_delta",
                                                              "partial_json": text}})
    data = anthropic_events(
        ("message_start", {"message": {"id": "m", "usage": {}}}), start("delete_demo_file"),
        delta('{"path":"notes/'), start("lookup_demo_value"), delta('todo.txt","dry_run":false}'),
        ("content_block_stop", {"index": 0}),
        ("message_delta", {"delta": {"stop_reason": "tool_use"}, "usage": {}}),
        ("message_stop", {}))
    assert [action for action, _ in decisions(data).values()] == ["refuse"]


def test_a_step_restarted_before_its_stop_is_not_spliced_into_one_call() -> None:
    def ev(kind: str, **payload: object) -> str:
        return f"event: {kind}\ndata: {json.dumps({**payload, 'event_type': kind})}\n\n"

    def start(name: str) -> str:
        return ev("step.start", index=0, step={"id": name, "type": "function_call", "name": name,
                                               "arguments": {}})

    def delta(text: str) -> str:
        return ev("step.delta", index=0, delta={"type": "arguments_delta", "arguments": text})
    data = "".join([
        ev("interaction.created", interaction={"id": "i", "status": "in_progress"}),
        start("delete_demo_file"), delta('{"path":"notes/'), start("lookup_demo_value"),
        delta('todo.txt","dry_run":false}'), ev("step.stop", index=0),
        ev("interaction.completed", interaction={"id": "i", "status": "requires_action"}),
        "event: done\ndata: [DONE]\n\n"]).encode()
    assert [action for action, _ in decisions(data).values()] == ["refuse"]


def test_a_call_renamed_on_the_way_is_refused() -> None:
    data = (chat_call(0, "", id="call_1", type="function", name="delete_demo_file")
            + chat_call(0, '{"path":"notes/todo.txt","dry_run":false}', name="lookup_demo_value")
            + chat_chunk({}, "tool_calls") + "data: [DONE]\n\n").encode()
    assert decisions(data) == {"choice0/call0": ("refuse", "provider_error")}


def test_a_chat_call_after_its_choices_finish_reason_is_refused() -> None:
    data = (chat_call(0, '{"key":"Objective"}', id="c1", type="function",
                      name="lookup_demo_value") + chat_chunk({}, "tool_calls")
            + chat_chunk({"tool_calls": [{"index": 1, "id": "c2", "type": "function", "function": {
                "name": "delete_demo_file", "arguments": '{"path":"a","dry_run":false}'}}]},
                "tool_calls") + "data: [DONE]\n\n").encode()
    assert decisions(data) == {"choice0/call0": ("execute", None),
                               "choice0/call1": ("refuse", "truncated")}


def gemini_chunk(candidates: list[tuple[int, list[dict], str | None]]) -> str:
    return "data: " + json.dumps({"candidates": [
        {"index": c, "content": {"role": "model", "parts": parts},
         **({"finishReason": finish} if finish else {})} for c, parts, finish in candidates]}) \
        + "\r\n\r\n"


def test_a_gemini_call_after_its_candidates_finish_reason_is_refused() -> None:
    """Candidate 0 finishes; its call comes in the frame where candidate 1 finishes (the turn's
    end): it used to execute, without even an anomaly."""
    call = fc(name="delete_demo_file", args={"path": "a", "dry_run": False})
    data = (gemini_chunk([(0, [{"text": "hi"}], "STOP"), (1, [{"text": "ho"}], None)])
            + gemini_chunk([(0, [call], None), (1, [{"text": "x"}], "STOP")])).encode()
    assert decisions(data) == {"call:0": ("refuse", "truncated")}


def test_a_streamed_call_after_the_terminal_is_never_decided() -> None:
    """Its text is published at the end of the stream (frame None): that is late too."""
    lookup = fc(name="lookup_demo_value", args={"key": "Objective"})
    late = fc(name="delete_demo_file", willContinue=True,
              partialArgs=[{"jsonPath": "$.path", "stringValue": "notes/todo.txt"}])
    data = (gemini_chunk([(0, [lookup], "STOP")]) + gemini_chunk([(0, [late], None)])).encode()
    assert decisions(data) == {"call:0": ("execute", None)}
    assert list(engine(data).state.calls) == ["call:0"]


# -- found by a third review ------------------------------------------------------------------

def test_an_earlier_cut_or_failure_is_not_forgotten_by_a_later_stop_reason() -> None:
    """The last stop reason used to win: a choice cut by content_filter, then another choice's
    stop, executed; so did Anthropic's refusal followed by a second message_delta."""
    call = chat_call(0, '{"key":"Objective"}', id="c1", type="function", name="lookup_demo_value")
    two_choices = (call + chat_chunk({}, "content_filter") + "data: " + json.dumps(
        {"id": "c", "object": "chat.completion.chunk", "choices": [
            {"index": 1, "delta": {"content": "hi"}, "finish_reason": "stop"}]})
        + "\n\ndata: [DONE]\n\n").encode()
    assert decisions(two_choices) == {"choice0/call0": ("refuse", "provider_error")}
    length_then_tools = (call + chat_chunk({}, "length") + chat_chunk({}, "tool_calls")
                         + "data: [DONE]\n\n").encode()
    assert decisions(length_then_tools) == {"choice0/call0": ("refuse", "truncated")}
    block = [("message_start", {"message": {"id": "m", "usage": {}}}),
             ("content_block_start", {"index": 0, "content_block": {
                 "type": "tool_use", "id": "t", "name": "lookup_demo_value", "input": {}}}),
             ("content_block_delta", {"index": 0, "delta": {
                 "type": "input_json_delta", "partial_json": '{"key":"Objective"}'}}),
             ("content_block_stop", {"index": 0})]
    for first, reason in (("refusal", "provider_error"), ("max_tokens", "truncated")):
        data = anthropic_events(*block, *[("message_delta", {"delta": {"stop_reason": r},
                                                              "usage": {}}) for r in (first, "tool_use")],
                                ("message_stop", {}))
        assert decisions(data) == {"block:0": ("refuse", reason)}
    lookup = fc(name="lookup_demo_value", args={"key": "Objective"})
    for finish, reason in (("SAFETY", "provider_error"), ("MAX_TOKENS", "truncated")):
        data = gemini_chunk([(0, [lookup], finish), (1, [{"text": "x"}], "STOP")]).encode()
        assert decisions(data) == {"call:0": ("refuse", reason)}


def test_a_call_the_provider_runs_itself_is_never_run_by_the_harness() -> None:
    """A server_tool_use block named like a client tool used to execute that tool."""
    data = anthropic_events(
        ("message_start", {"message": {"id": "m", "usage": {}}}),
        ("content_block_start", {"index": 0, "content_block": {
            "type": "server_tool_use", "id": "s", "name": "lookup_demo_value", "input": {}}}),
        ("content_block_delta", {"index": 0, "delta": {"type": "input_json_delta",
                                                       "partial_json": '{"key":"Objective"}'}}),
        ("content_block_stop", {"index": 0}),
        ("message_delta", {"delta": {"stop_reason": "end_turn"}, "usage": {}}),
        ("message_stop", {}))
    assert decisions(data) == {"block:0": ("refuse", "unknown_tool")}


def test_responses_final_response_is_checked_against_the_stream() -> None:
    item = {"id": "fc_1", "type": "function_call", "call_id": "c1", "name": "lookup_demo_value",
            "status": "completed"}
    agreeing = {"id": "r", "status": "completed",
                "output": [{**item, "arguments": '{"key":"Objective"}'}]}
    assert decisions(responses_stream(response=agreeing)) == {"item:fc_1": ("execute", None)}
    differing = {**agreeing, "output": [{**item, "arguments": '{"key":"Owner"}'}]}
    assert decisions(responses_stream(response=differing)) == {
        "item:fc_1": ("refuse", "provider_error")}
    incomplete = {**agreeing, "status": "incomplete",
                  "incomplete_details": {"reason": "max_output_tokens"}}
    assert decisions(responses_stream(response=incomplete)) == {
        "item:fc_1": ("refuse", "truncated")}
    assert decisions(responses_stream("in_progress")) == {"item:fc_1": ("refuse", "truncated")}


def test_chat_stops_reading_at_a_done_without_finish_reason() -> None:
    """The SDKs stop at the first [DONE]: what came after it (the rest of a call, a finish
    reason, a second [DONE]) made a complete turn that executed."""
    data = (chat_call(0, '{"key":"Obj', id="c1", type="function", name="lookup_demo_value")
            + "data: [DONE]\n\n" + chat_call(0, 'ective"}') + chat_chunk({}, "tool_calls")
            + "data: [DONE]\n\n").encode()
    assert decisions(data) == {"choice0/call0": ("refuse", "truncated")}


def test_a_call_whose_id_changes_is_refused() -> None:
    data = (chat_call(0, "", id="call_A", type="function", name="lookup_demo_value")
            + chat_call(0, '{"key":"Objective"}', id="call_B", type="function")
            + chat_chunk({}, "tool_calls") + "data: [DONE]\n\n").encode()
    assert decisions(data) == {"choice0/call0": ("refuse", "provider_error")}


# -- the adversarial corpus (tests/adversarial: every stream a review made execute) -----------

ADVERSARIAL = pathlib.Path(__file__).resolve().parent / "adversarial"
CORPUS_TOOLS = ToolSet(json.loads((ADVERSARIAL / "tools.json").read_text()))
REFUSED_AS: dict[str, str | dict[str, str]] = {
    "a_splice": "truncated", "anth_refusal_then_tool_use": "provider_error",
    "anth_server_tool_use": "unknown_tool", "b_startinput": "provider_error",
    "c_eventmismatch": "provider_error", "c2_noevent": "provider_error",
    "chat_id_changes": "provider_error", "chat_more_after_done": "truncated",
    "chat_two_choices_filter": "provider_error", "d_dupkeys": "invalid_json",
    "gem_two_candidates_safety": "provider_error", "i2_tooluse_after_stop": "provider_error",
    "i_server_after_delta": "provider_error", "j_resp_delta_before_added": "provider_error",
    "k_resp_final_name_differs": "truncated", "l_chat_text_then_object": "provider_error",
    "q_int_restart": "truncated", "resp_completed_status_incomplete": "truncated",
    "resp_final_output_differs": "provider_error", "s_int_legacy_twice": "provider_error",
    "u_gem_args_plus_partial": "provider_error", "v_gem_piece_replace": "provider_error",
    # (a fifth review: the other call of each of these is whole and executes)
    "r1_chat_noindex_two_open": {"choice0/call0": "execute", "choice0/call1": "provider_error"},
    "r2_resp_itemid_vs_index": "provider_error",
    "r3_resp_output_index_reused": {"item:fc_A": "execute", "item:fc_B": "provider_error"},
    "r4_resp_call_missing_from_final": {"item:fc_A": "execute", "item:fc_B": "provider_error"},
    # (a sixth review: the anomaly cap, unreadable frames, [DONE] where the SDKs stop, unknown
    # stop reasons)
    "anth_cap_bypass": "provider_error", "anth_float_index": "provider_error",
    "anth_notjson_mid": "provider_error", "chat_bad_choice": "provider_error",
    "chat_done_prefix": "truncated", "chat_function_string": "provider_error",
    "chat_notjson_mid": "provider_error", "chat_string_index": "provider_error",
    "chat_toolcalls_object": "provider_error", "chat_unknown_finish": "provider_error",
    "gem_bad_part_mid": "provider_error", "int_completed_no_status": "provider_error",
    "int_more_after_done": "truncated", "int_unknown_status": "provider_error",
    # (a seventh review: no stop reason, frames the SDK skips, wrongly typed indexes and parts)
    "anth_bad_stop_reason": "provider_error", "anth_no_message_delta": "provider_error",
    "anth_no_stop_reason": "provider_error", "anth_null_stop_reason": "provider_error",
    "anth_stop_noevent": "provider_error", "anth_stop_under_ping": "provider_error",
    "chat_choice_index_missing": "provider_error", "chat_choice_index_string": "provider_error",
    "gem_content_not_object": "provider_error", "gem_index_string": "provider_error",
    "gem_parts_not_list": "provider_error",
}


def test_the_corpus_is_all_listed() -> None:
    assert sorted(p.stem for p in ADVERSARIAL.glob("*.sse")) == sorted(REFUSED_AS)


@pytest.mark.parametrize("name", sorted(REFUSED_AS))
@pytest.mark.parametrize("chunking", ["whole", "bytes:1", "random:5"])
def test_nothing_in_the_adversarial_corpus_executes(name: str, chunking: str) -> None:
    data = (ADVERSARIAL / f"{name}.sse").read_bytes()
    steps = replay([(0.0, data)], tools=CORPUS_TOOLS, chunking=Chunking.parse(chunking))
    found = {s.decision.call: s.decision.reason or s.decision.action
             for s in steps if isinstance(s, DecisionStep)}
    expected = REFUSED_AS[name]
    if isinstance(expected, str):  # every call, refused so
        assert found and set(found.values()) == {expected}
    else:
        assert found == expected
