"""Every declared anomaly code is raised by some stream, and refuses as its effect says.

The table maps every :class:`Code` to a minimal stream (bytes, built by the small per-protocol
helpers below) that, replayed through the real engine, raises it. A code added to the registry
without a row here fails :func:`test_every_code_has_a_trigger`; a raise site that stops firing
fails its own row. Where the code refuses (``disputes``, ``unreadable``), the row names the rule
that refuses: ``disputed`` / ``unreadable`` or, when the same stream also cuts the call, the
earlier rule that fires first (the gate's rules are ordered; see README "The gate").
"""

from __future__ import annotations

import json
import struct
from binascii import crc32
from dataclasses import dataclass
from typing import Any

import pytest
from callscope.core.aws_eventstream import event_message
from callscope.core.demo_tools import DEMO_TOOL_DEFINITIONS
from callscope.core.engine import CallStep, DecisionStep, Engine
from callscope.core.events import Anomaly
from callscope.core.gate.codes import Code, Effect, Scope
from callscope.core.limits import Limits
from callscope.core.replay import replay
from callscope.core.tools import ToolSet
from readers import sse_frames

TOOLS = ToolSet(DEMO_TOOL_DEFINITIONS)
ARGS = '{"key":"Objective"}'
OBJ = {"key": "Objective"}
LOOKUP = "lookup_demo_value"
UNDECIDED = "(undecided)"
"""The code names a key that never becomes a call of the turn (a late call, a non-call item):
there is nothing to decide, and nothing runs."""
DEEP = '{"key":' + "[" * 1000 + "]" * 1000 + "}"
"""Within what the JSON reader takes (1024 levels), past what a writer can write back: orjson
stops at 255 levels and the stdlib fallback at Python's recursion limit."""


@dataclass(frozen=True)
class Case:
    protocol: str | None
    data: bytes
    rule: str | None = None
    """The rule that refuses the calls the code concerns (the call it names, or every call for a
    turn code); None: not asserted (harmless codes assert that every call executes instead)."""
    limits: Limits | None = None
    request: Any = None
    """The recorded request's body the gate reads (an output-token limit), if any."""


# -- OpenAI Chat Completions -------------------------------------------------------------------

def chunk(delta: Any = None, finish: Any = None, *, choice: Any = 0, **top: Any) -> dict[str, Any]:
    return {"object": "chat.completion.chunk", **top, "choices": [
        {"index": choice, "delta": {} if delta is None else delta, "finish_reason": finish}]}


def tool(index: Any = 0, args: Any = ARGS, *, id: str | None = "c1", name: str | None = LOOKUP) -> dict:
    function = {k: v for k, v in (("name", name), ("arguments", args)) if v is not None}
    fragment: dict[str, Any] = {"type": "function", "function": function}
    if index is not None:
        fragment["index"] = index
    if id is not None:
        fragment["id"] = id
    return fragment


def calls(*fragments: Any) -> dict[str, Any]:
    return chunk({"tool_calls": list(fragments)})


def chat(*frames: Any) -> bytes:
    return sse_frames(*((None, frame) for frame in frames))


CALL = calls(tool())
FINISH = chunk(finish="tool_calls")
END = (FINISH, "[DONE]")

CHAT = {
    Code.NOT_JSON: Case("openai-chat", chat(CALL, "{nope", *END), "unreadable"),
    Code.BAD_CHOICES: Case("openai-chat", chat(CALL, {"choices": 5}, *END), "unreadable"),
    Code.BAD_CHOICE: Case("openai-chat", chat(CALL, {"choices": [5]}, *END), "unreadable"),
    Code.MISSING_CHOICE_INDEX: Case("openai-chat", chat(
        {"choices": [{"delta": {"tool_calls": [tool()]}}]}, *END), "unreadable"),
    Code.BAD_DELTA: Case("openai-chat", chat(CALL, chunk(5), *END), "unreadable"),
    Code.BAD_TEXT: Case("openai-chat", chat(chunk({"content": 5}), CALL, *END), "unreadable"),
    Code.BAD_TOOL_CALLS: Case("openai-chat", chat(CALL, chunk({"tool_calls": 5}), *END), "unreadable"),
    Code.BAD_TOOL_CALL: Case("openai-chat", chat(CALL, calls(5), *END), "unreadable"),
    # The index is a string: routed by id (missing_index, harmless), but the frame is not the protocol's.
    Code.BAD_INDEX: Case("openai-chat", chat(calls(tool("0")), *END), "unreadable"),
    Code.CALL_WITHOUT_NAME: Case("openai-chat", chat(calls(tool(name=None)), *END), "disputed"),
    Code.IDENTITY_CHANGED: Case("openai-chat", chat(
        calls(tool(args="")), calls(tool(args=ARGS, name="add_demo_numbers")), *END), "disputed"),
    Code.EMPTY_OBJECT_THEN_MORE: Case("openai-chat", chat(
        calls(tool(args="{}")), calls(tool(args=ARGS, id=None, name=None)), *END), "disputed"),
    Code.ARGUMENTS_NOT_TEXT: Case("openai-chat", chat(calls(tool(args=OBJ)), *END), "disputed"),
    # The finish_reason closed the call; one more fragment for it before [DONE].
    Code.DELTA_AFTER_CLOSE: Case("openai-chat", chat(
        calls(tool(args='{"key":')), FINISH, calls(tool(args='"Objective"}', id=None, name=None)),
        "[DONE]"), "disputed"),
    # Two calls open, then a fragment with neither index nor id: given to (and disputing) the
    # last one. The first has no arguments, so nothing here can execute.
    Code.AMBIGUOUS_FRAGMENT: Case("openai-chat", chat(
        calls(tool(0, args=None), tool(1, args=None, id="c2")),
        calls(tool(None, id=None, name=None)), *END), "disputed"),
    Code.REPEATED_IDENTITY: Case("openai-chat", chat(
        calls(tool(args='{"key":')), calls(tool(args='"Objective"}')), *END)),
    Code.MISSING_INDEX: Case("openai-chat", chat(calls(tool(None)), *END)),
    # Ollama: every call says index 0; a new id after arguments is a second call.
    Code.INDEX_REUSED: Case("openai-chat", chat(CALL, calls(tool(id="c2")), *END)),
    Code.UNEXPECTED_OBJECT: Case("openai-chat", chat(CALL, chunk(object="chat.completion"), *END)),
    Code.BAD_FINISH_REASON: Case("openai-chat", chat(CALL, chunk(finish=5), "[DONE]"), "failed"),
    Code.UNKNOWN_FINISH_REASON: Case("openai-chat", chat(CALL, chunk(finish="odd"), "[DONE]"), "failed"),
    Code.REPEATED_FINISH_REASON: Case("openai-chat", chat(CALL, FINISH, *END)),
    Code.DELTA_AFTER_FINISH: Case("openai-chat", chat(CALL, FINISH, chunk({"content": "x"}), "[DONE]")),
    Code.DONE_WITHOUT_FINISH_REASON: Case("openai-chat", chat(CALL, "[DONE]"), "no-terminal"),
    Code.CHOICE_WITHOUT_FINISH_REASON: Case("openai-chat", chat(
        CALL, chunk({"content": "x"}, choice=1), *END)),
    # [DONE] without a finish_reason did not end the turn; the SDKs stop reading there.
    Code.DATA_AFTER_DONE: Case("openai-chat", chat(CALL, "[DONE]", FINISH), "no-terminal"),
    Code.DONE_WITH_MORE: Case("openai-chat", chat(CALL, FINISH, "[DONE] and more")),
    Code.REPEATED_TERMINAL: Case("openai-chat", chat(CALL, *END, "[DONE]")),
    Code.DATA_AFTER_TERMINAL: Case("openai-chat", chat(CALL, *END, chunk({"content": "x"}))),
    # A turn of text, then a call after [DONE]: never read into the turn, never decided.
    Code.CALL_AFTER_TERMINAL: Case("openai-chat", chat(
        chunk({"content": "hi"}), chunk(finish="stop"), "[DONE]", CALL), UNDECIDED),
}


# -- OpenAI Responses --------------------------------------------------------------------------

def resp(*events: dict[str, Any], numbered: bool = True, gap: int | None = None) -> bytes:
    """Events numbered 0, 1, ... (``gap``: from that event on, one number is skipped)."""
    frames = []
    for n, event in enumerate(events):
        seq = {"sequence_number": n + (gap is not None and n >= gap)} if numbered else {}
        frames.append((event["type"], {**event, **seq}))
    return sse_frames(*frames)


def r_event(kind: str, **payload: Any) -> dict[str, Any]:
    return {"type": f"response.{kind}", **payload}


def item(item_id: str = "fc_1", *, kind: str = "function_call", name: str = LOOKUP, **more: Any) -> dict:
    return {"id": item_id, "type": kind, "call_id": "c1", "name": name, **more}


def r_added(item_id: str = "fc_1", idx: int = 0, **more: Any) -> dict[str, Any]:
    return r_event("output_item.added", output_index=idx,
                   item=item(item_id, status="in_progress", arguments="", **more))


def r_delta(item_id: str = "fc_1", idx: int = 0, delta: Any = ARGS) -> dict[str, Any]:
    return r_event("function_call_arguments.delta", item_id=item_id, output_index=idx, delta=delta)


def r_args_done(item_id: str = "fc_1", idx: int = 0, arguments: Any = ARGS, **more: Any) -> dict:
    return r_event("function_call_arguments.done", item_id=item_id, output_index=idx,
                   arguments=arguments, **more)


def r_item_done(item_id: str = "fc_1", idx: int = 0, arguments: Any = ARGS,
                status: str = "completed", **more: Any) -> dict[str, Any]:
    return r_event("output_item.done", output_index=idx,
                   item=item(item_id, status=status, arguments=arguments, **more))


def r_call(item_id: str = "fc_1", idx: int = 0, **more: Any) -> tuple[dict[str, Any], ...]:
    return (r_added(item_id, idx, **more), r_delta(item_id, idx), r_args_done(item_id, idx),
            r_item_done(item_id, idx, **more))


def r_end(kind: str = "completed", rid: str = "r", status: str | None = None, **more: Any) -> dict:
    return r_event(kind, response={"id": rid, "status": status or kind, "output": [], **more})


CREATED = r_event("created", response={"id": "r", "status": "in_progress", "output": []})
R_CALL = r_call()

RESPONSES = {
    Code.SEQUENCE_GAP: Case("openai-responses", resp(CREATED, *R_CALL, r_end(), gap=2), "unreadable"),
    Code.MISSING_SEQUENCE_NUMBER: Case("openai-responses", resp(CREATED, *R_CALL, r_end(), numbered=False)),
    Code.EVENT_NAME_MISMATCH: Case("openai-responses", sse_frames(
        *((e["type"], {**e, "sequence_number": n}) for n, e in enumerate((CREATED, *R_CALL))),
        ("response.in_progress", {**r_end(), "sequence_number": 5})), "unreadable"),
    Code.RESPONSE_ID_CHANGED: Case("openai-responses", resp(CREATED, *R_CALL, r_end(rid="r2")), "unreadable"),
    Code.BAD_ITEM: Case("openai-responses", resp(
        CREATED, *R_CALL, r_event("output_item.added", output_index=1, item=5), r_end()), "unreadable"),
    Code.BAD_RESPONSE: Case("openai-responses", resp(
        CREATED, *R_CALL, r_event("completed", response="nope")), "unreadable"),
    Code.BAD_ARGUMENTS: Case("openai-responses", resp(
        CREATED, *R_CALL[:2], r_args_done(arguments=5), R_CALL[3], r_end()), "disputed"),
    Code.FINAL_COPY_MISMATCH: Case("openai-responses", resp(
        CREATED, *R_CALL[:2], r_args_done(arguments='{"key":"Owner"}'),
        r_item_done(arguments='{"key":"Owner"}'), r_end()), "disputed"),
    Code.FINAL_ARGUMENTS_DIFFER: Case("openai-responses", resp(
        CREATED, *R_CALL[:3], r_item_done(arguments='{"key":"Owner"}'), r_end()), "disputed"),
    Code.CALL_NOT_ANNOUNCED: Case("openai-responses", resp(
        CREATED, r_args_done(name=LOOKUP), r_end()), "disputed"),
    Code.DUPLICATE_ITEM: Case("openai-responses", resp(CREATED, r_added(), *R_CALL, r_end()), "disputed"),
    # A message held output_index 0; a function call is added at the same index.
    Code.OUTPUT_INDEX_REUSED: Case("openai-responses", resp(
        CREATED, r_event("output_item.added", output_index=0, item={"id": "msg_1", "type": "message"}),
        *R_CALL, r_end()), "disputed"),
    # A delta whose item_id is the first call's and whose output_index is the second's: both.
    Code.ROUTING_DISAGREES: Case("openai-responses", resp(
        CREATED, r_added(), r_added("fc_2", 1), r_delta("fc_1", 1), r_args_done(), r_item_done(),
        r_args_done("fc_2", 1, "{}"), r_item_done("fc_2", 1, "{}"), r_end()), "disputed"),
    # A custom tool call is no call of this reader's: the key it disputes is never a call.
    Code.UNHANDLED_ITEM: Case("openai-responses", resp(
        CREATED, r_event("output_item.added", output_index=0, item=item("ctc_1", kind="custom_tool_call")),
        r_end()), UNDECIDED),
    # Marked incomplete: cut (rule call-cut comes before disputed).
    Code.CALL_INCOMPLETE: Case("openai-responses", resp(
        CREATED, *R_CALL[:3], r_item_done(status="incomplete"), r_end()), "call-cut"),
    # No done event at all: never closed (rule not-closed comes before disputed).
    Code.CALL_NOT_DONE: Case("openai-responses", resp(CREATED, *R_CALL[:2], r_end()), "not-closed"),
    # The final response lists fc_1 (an undefined tool, so it cannot run) and leaves out fc_2.
    Code.CALL_MISSING_FROM_FINAL_RESPONSE: Case("openai-responses", resp(
        CREATED, *r_call(name="no_such_tool"), *r_call("fc_2", 1),
        r_end(output=[item(name="no_such_tool", arguments=ARGS, status="completed")])), "disputed"),
    Code.ITEM_ID_CHANGED: Case("openai-responses", resp(
        CREATED, r_added(), r_delta("fc_rotated"), *R_CALL[2:], r_end())),
    Code.ARGUMENTS_ONLY_IN_FINAL_COPY: Case("openai-responses", resp(
        CREATED, R_CALL[0], *R_CALL[2:], r_end())),
    Code.STATUS_MISMATCH: Case("openai-responses", resp(
        CREATED, *R_CALL, r_end(status="in_progress")), "failed"),
    Code.UNKNOWN_INCOMPLETE_REASON: Case("openai-responses", resp(
        CREATED, *R_CALL, r_end("incomplete", incomplete_details={"reason": "odd"})), "stop-cut"),
    Code.CALL_ONLY_IN_FINAL_RESPONSE: Case("openai-responses", resp(
        CREATED, r_end(output=[item("fc_9", arguments=ARGS, status="completed")]))),
    Code.UNKNOWN_EVENT: Case("openai-responses", resp(CREATED, *R_CALL, r_event("odd"), r_end())),
    Code.MISSING_TERMINAL: Case("openai-responses", resp(CREATED, *R_CALL), "no-terminal"),
}


# -- Anthropic Messages ------------------------------------------------------------------------

def anth(*events: Any) -> bytes:
    """Events as dicts (the event: line is their type) or ``(event line or None, payload)``."""
    return sse_frames(*(e if isinstance(e, tuple) else (e["type"], e) for e in events))


def message_start(msg_id: str = "m", usage: Any = None) -> dict[str, Any]:
    return {"type": "message_start", "message": {
        "id": msg_id, "type": "message", "role": "assistant", "content": [],
        "usage": {"output_tokens": 1} if usage is None else usage}}


def block(index: Any = 1, kind: str = "tool_use", **fields: Any) -> dict[str, Any]:
    content = {"type": kind, **({"id": "t1", "name": LOOKUP, "input": {}} if kind == "tool_use" else {})}
    return {"type": "content_block_start", "index": index, "content_block": {**content, **fields}}


def a_delta(index: Any = 1, partial: Any = ARGS, kind: str = "input_json_delta") -> dict[str, Any]:
    field = "partial_json" if kind == "input_json_delta" else "text"
    return {"type": "content_block_delta", "index": index, "delta": {"type": kind, field: partial}}


def a_stop(index: Any = 1) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def message_delta(stop_reason: Any = "tool_use") -> dict[str, Any]:
    return {"type": "message_delta", "delta": {"stop_reason": stop_reason}, "usage": {"output_tokens": 2}}


A_CALL = (block(), a_delta(), a_stop())
A_END = (message_delta(), {"type": "message_stop"})

ANTHROPIC = {
    Code.EVENT_NAME_MISSING: Case("anthropic", anth(
        message_start(), block(), (None, a_delta()), a_stop(), *A_END), "unreadable"),
    Code.EVENT_BEFORE_START: Case("anthropic", anth(
        block(0, "text", text=""), message_start(), a_stop(0), *A_CALL, *A_END), "unreadable"),
    Code.BAD_MESSAGE: Case("anthropic", anth(
        {"type": "message_start", "message": 5}, *A_CALL, *A_END), "unreadable"),
    Code.BAD_BLOCK: Case("anthropic", anth(
        message_start(), {"type": "content_block_start", "index": 0, "content_block": 5},
        a_stop(0), *A_CALL, *A_END), "unreadable"),
    Code.BAD_USAGE: Case("anthropic", anth(message_start(usage=5), *A_CALL, *A_END)),
    # A text delta for block 1 before block 1 started (as a tool call): the call is disputed.
    Code.DELTA_WITHOUT_START: Case("anthropic", anth(
        message_start(), a_delta(1, "x", "text_delta"), block(), a_delta(), a_stop(), *A_END), "disputed"),
    Code.DELTA_FOR_UNKNOWN_CALL: Case("anthropic", anth(message_start(), a_delta(), a_stop(), *A_END),
                                      "disputed"),
    Code.STOP_WITHOUT_START: Case("anthropic", anth(message_start(), *A_CALL, a_stop(), *A_END), "disputed"),
    # The block starts again after its stop: the call is closed a second time.
    Code.CLOSED_TWICE: Case("anthropic", anth(message_start(), *A_CALL, block(), a_stop(), *A_END),
                            "disputed"),
    Code.UNKNOWN_DELTA: Case("anthropic", anth(
        message_start(), block(), a_delta(), a_delta(kind="odd_delta"), a_stop(), *A_END), "disputed"),
    Code.START_INPUT_THEN_DELTAS: Case("anthropic", anth(
        message_start(), block(input={"key": "Owner"}), a_delta(), a_stop(), *A_END), "disputed"),
    # A start input no JSON writer can serialize: the call has no text, and is disputed.
    Code.UNSERIALIZABLE_ARGUMENTS: Case("anthropic", anth(
        message_start(), ("content_block_start", json.dumps(block()).replace("{}", DEEP)), a_stop(),
        *A_END), "disputed"),
    # The old block is closed as cut when it starts again (rule call-cut comes before disputed).
    Code.BLOCK_RESTARTED: Case("anthropic", anth(
        message_start(), block(), a_delta(1, '{"key":'), *A_CALL, *A_END), "call-cut"),
    Code.BLOCK_NOT_STOPPED: Case("anthropic", anth(message_start(), *A_CALL[:2], *A_END), "call-cut"),
    Code.DUPLICATE_MESSAGE_START: Case("anthropic", anth(message_start(), message_start(), *A_CALL, *A_END)),
    Code.SPLICED_MESSAGE_START: Case("anthropic", anth(
        message_start(), *A_CALL, message_start("m2"), *A_END), "call-cut"),
    Code.BAD_STOP_REASON: Case("anthropic", anth(message_start(), *A_CALL, message_delta(5),
                                                 A_END[1]), "failed"),
    Code.UNKNOWN_STOP_REASON: Case("anthropic", anth(message_start(), *A_CALL, message_delta("odd"),
                                                     A_END[1]), "failed"),
    Code.MISSING_STOP_REASON: Case("anthropic", anth(message_start(), *A_CALL, message_delta(None),
                                                     A_END[1]), "failed"),
    Code.UNEXPECTED_DONE: Case("anthropic", anth(message_start(), *A_CALL, *A_END, (None, "[DONE]"))),
    Code.TEXT_CAPPED: Case("anthropic", anth(
        message_start(), block(0, "text", text="more than four"), a_stop(0), *A_CALL, *A_END),
        limits=Limits(max_text_chars=4)),
    # Past the cap, unknown deltas are counted, not kept (one anomalies_capped says so), and the
    # second call's, past the cap, still disputes it.
    Code.ANOMALIES_CAPPED: Case("anthropic", anth(
        message_start(), block(), a_delta(kind="odd_delta"), a_delta(), a_stop(),
        block(2, id="t2"), a_delta(2, kind="odd_delta"), a_delta(2), a_stop(2), *A_END),
        "disputed", limits=Limits(max_anomalies_per_code=1)),
    # The second call is one past the limit: the engine stops reading, every call is refused.
    Code.LIMIT_EXCEEDED: Case("anthropic", anth(
        message_start(), *A_CALL, block(2, id="t2"), a_delta(2), a_stop(2), *A_END),
        "limit", limits=Limits(max_calls=1)),
}


# -- Gemini Interactions -----------------------------------------------------------------------

def inter(*events: Any) -> bytes:
    """Events as dicts (the event: line is their event_type), or ``(event line, payload)``."""
    return sse_frames(*(e if isinstance(e, tuple) else (e["event_type"], e) for e in events))


def i_event(kind: str, **payload: Any) -> dict[str, Any]:
    return {"event_type": kind, **payload}


def i_step(index: Any = 0, kind: str = "function_call", **fields: Any) -> dict[str, Any]:
    step = {"type": kind, "id": "s", "name": LOOKUP, "arguments": {}, **fields}
    return i_event("step.start", index=index, step={k: v for k, v in step.items() if v is not None})


def i_delta(index: Any = 0, arguments: Any = ARGS, kind: str = "arguments_delta") -> dict[str, Any]:
    return i_event("step.delta", index=index, delta={"type": kind, "arguments": arguments})


def i_completed(status: Any = "requires_action") -> dict[str, Any]:
    return i_event("interaction.completed", interaction={"id": "i", "status": status})


CREATED_I = i_event("interaction.created", interaction={"id": "i", "status": "in_progress"})
I_STOP = i_event("step.stop", index=0)
I_CALL = (i_step(), i_delta(), I_STOP)
DONE = ("done", "[DONE]")
I_END = (i_completed(), DONE)


def legacy(arguments: dict[str, Any]) -> dict[str, Any]:
    return i_event("content.delta", index=0, delta={"type": "function_call", "id": "f", "name": LOOKUP,
                                                    "arguments": arguments})


INTERACTIONS = {
    Code.BAD_STEP: Case("gemini-interactions", inter(
        CREATED_I, i_event("step.start", index=1, step=5), i_event("step.stop", index=1), *I_CALL, *I_END),
        "unreadable"),
    Code.START_ARGUMENTS_THEN_DELTAS: Case("gemini-interactions", inter(
        CREATED_I, i_step(arguments={"key": "Owner"}), i_delta(), I_STOP, *I_END), "disputed"),
    Code.MIXED_ARGUMENT_FORMS: Case("gemini-interactions", inter(
        CREATED_I, i_step(), i_delta(0, '{"key":'), i_delta(0, OBJ), I_STOP, *I_END), "disputed"),
    # The legacy schema's whole-call deltas, twice, with different objects.
    Code.ARGUMENTS_REPLACED: Case("gemini-interactions", inter(
        i_event("interaction.start", interaction={"id": "i"}),
        i_event("content.start", index=0, content={"type": "function_call"}),
        legacy({"key": "Owner"}), legacy(OBJ), i_event("content.stop", index=0),
        i_event("interaction.complete", interaction={"id": "i", "status": "requires_action"}),
        DONE), "disputed"),
    Code.STEP_RESTARTED: Case("gemini-interactions", inter(
        CREATED_I, i_step(), i_delta(0, '{"key":'), *I_CALL, *I_END), "call-cut"),
    Code.STEP_NOT_STOPPED: Case("gemini-interactions", inter(CREATED_I, *I_CALL[:2], *I_END), "call-cut"),
    Code.NO_ARGUMENTS: Case("gemini-interactions", inter(
        CREATED_I, i_step(name="list_demo_keys", arguments=None), I_STOP, *I_END)),
    Code.INTERACTION_RESTARTED: Case("gemini-interactions", inter(
        CREATED_I, *I_CALL, CREATED_I, *I_END), "call-cut"),
    Code.DONE_BEFORE_COMPLETED: Case("gemini-interactions", inter(CREATED_I, *I_CALL, DONE, I_END[0]),
                                     "no-terminal"),
    Code.REPEATED_DONE: Case("gemini-interactions", inter(CREATED_I, *I_CALL, *I_END, DONE)),
    Code.MISSING_DONE: Case("gemini-interactions", inter(CREATED_I, *I_CALL, I_END[0])),
    Code.MISSING_STATUS: Case("gemini-interactions", inter(CREATED_I, *I_CALL, i_completed(None), DONE),
                              "failed"),
    Code.UNKNOWN_STATUS: Case("gemini-interactions", inter(CREATED_I, *I_CALL, i_completed("odd"), DONE),
                              "failed"),
}


# -- Gemini generateContent --------------------------------------------------------------------

def gen(*chunks: Any) -> bytes:
    return sse_frames(*((None, c) for c in chunks))


def parts(*items: Any, finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(items)}}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate]}


def fc(**fields: Any) -> dict[str, Any]:
    return {"functionCall": fields}


def piece(path: str = "$.key", **value: Any) -> dict[str, Any]:
    return {"jsonPath": path, **(value or {"stringValue": "Objective"})}


def streamed(*pieces: dict[str, Any]) -> dict[str, Any]:
    """A Vertex call announced with its first pieces (more to come), then the terminator."""
    return parts(fc(name=LOOKUP, partialArgs=list(pieces), willContinue=True))


G_CALL = parts(fc(name=LOOKUP, args=OBJ))
TERMINATOR = parts(fc())
G_END = parts(finish="STOP")

GENERATE = {
    Code.NOT_AN_OBJECT: Case("gemini-generate", gen(G_CALL, [1], G_END), "unreadable"),
    Code.BAD_CANDIDATES: Case("gemini-generate", gen(G_CALL, {"candidates": 5}, G_END), "unreadable"),
    Code.BAD_CANDIDATE: Case("gemini-generate", gen(G_CALL, {"candidates": [5]}, G_END), "unreadable"),
    Code.BAD_PART: Case("gemini-generate", gen(G_CALL, parts(5), G_END), "unreadable"),
    Code.BAD_FUNCTION_CALL: Case("gemini-generate", gen(G_CALL, parts({"functionCall": 5}), G_END),
                                 "unreadable"),
    Code.ARGS_NOT_OBJECT: Case("gemini-generate", gen(parts(fc(name=LOOKUP, args=5)), G_END), "disputed"),
    Code.PIECE_FOR_UNKNOWN_CALL: Case("gemini-generate", gen(
        parts(fc(partialArgs=[piece()])), TERMINATOR, G_END), "disputed"),
    Code.AMBIGUOUS_PIECE: Case("gemini-generate", gen(
        streamed(piece(stringValue="Objective", numberValue=1)), TERMINATOR, G_END), "disputed"),
    Code.BAD_PARTIAL_ARGS: Case("gemini-generate", gen(
        parts(fc(name=LOOKUP, partialArgs=5, willContinue=True)), TERMINATOR, G_END), "disputed"),
    Code.BAD_PIECE: Case("gemini-generate", gen(streamed(piece(), {"jsonPath": "$.x"}), TERMINATOR, G_END),
                         "disputed"),
    Code.BAD_PIECE_VALUE: Case("gemini-generate", gen(streamed(piece(stringValue=5)), TERMINATOR, G_END),
                               "disputed"),
    Code.STRING_REOPENED: Case("gemini-generate", gen(
        streamed(piece(stringValue="Obj"), piece(stringValue="ective")), TERMINATOR, G_END), "disputed"),
    Code.VALUE_REPLACED: Case("gemini-generate", gen(
        streamed(piece(numberValue=1), piece()), TERMINATOR, G_END), "disputed"),
    Code.BAD_JSON_PATH: Case("gemini-generate", gen(streamed(piece(), piece("key")), TERMINATOR, G_END),
                             "disputed"),
    # The string's last piece said more would follow: cut (rule call-cut comes before disputed).
    Code.STRING_NOT_ENDED: Case("gemini-generate", gen(
        streamed(piece(stringValue="Obj", willContinue=True)), TERMINATOR, G_END), "call-cut"),
    # The call's last part said willContinue when the finishReason closed it: cut, as above.
    Code.CALL_NOT_ENDED: Case("gemini-generate", gen(streamed(piece()), G_END), "call-cut"),
    # Candidate 0 finished, then sent a call (candidate 1 keeps the turn open): cut, as above.
    Code.CALL_AFTER_FINISH: Case("gemini-generate", gen(
        {"candidates": [{"index": 0, "finishReason": "STOP"}, {"index": 1, "content": {"parts": []}}]},
        G_CALL, {"candidates": [{"index": 1, "finishReason": "STOP"}]}), "call-cut"),
    # Vertex closes a whole streamed call by the finishReason, without the empty functionCall.
    Code.MISSING_CALL_TERMINATOR: Case("gemini-generate", gen(
        streamed(piece()), parts(fc(partialArgs=[], willContinue=False)), G_END)),
    Code.TERMINATOR_WITHOUT_CALL: Case("gemini-generate", gen(G_CALL, TERMINATOR, G_END)),
    Code.UNHANDLED_PART: Case("gemini-generate", gen(
        parts({"inlineData": {"mimeType": "image/png", "data": ""}}), G_CALL, G_END)),
    # No protocol given, and the first frame tells none: past max_undetected_frames, frames only.
    Code.PROTOCOL_UNKNOWN: Case(None, gen({"hello": 1}, {"hello": 2}),
                                limits=Limits(max_undetected_frames=1)),
}

# -- Bedrock ConverseStream (the AWS event stream: the framing's own faults) ---------------------

def converse(*messages: bytes) -> bytes:
    return b"".join(messages)


def c_event(kind: str, **payload: Any) -> bytes:
    return event_message(kind, json.dumps(payload).encode())


def corrupt(message: bytes, at: int) -> bytes:
    """The message with one byte flipped (``at`` from its start)."""
    return message[:at] + bytes((message[at] ^ 0xFF,)) + message[at + 1:]


C_CALL = (c_event("messageStart", role="assistant"),
          c_event("contentBlockStart", contentBlockIndex=0,
                  start={"toolUse": {"toolUseId": "t1", "name": LOOKUP}}),
          c_event("contentBlockDelta", contentBlockIndex=0, delta={"toolUse": {"input": ARGS}}),
          c_event("contentBlockStop", contentBlockIndex=0))
C_END = c_event("messageStop", stopReason="tool_use")
_HEADERS = b"\x01x\x2a"  # one header of an unknown value type (42), CRCs correct
_BAD_HEADERS = struct.pack("!II", 16 + len(_HEADERS), len(_HEADERS))
_BAD_HEADERS += struct.pack("!I", crc32(_BAD_HEADERS)) + _HEADERS
_BAD_HEADERS += struct.pack("!I", crc32(_BAD_HEADERS))
_NO_LENGTH = struct.pack("!II", 8, 0)
_NO_LENGTH += struct.pack("!I", crc32(_NO_LENGTH))

BEDROCK = {
    # A message whose payload lost a bit (the message CRC32 says so): the turn is unreadable.
    Code.FRAME_CHECKSUM: Case("bedrock-converse", converse(
        *C_CALL[:3], corrupt(c_event("metadata", usage={}), 20), C_CALL[3], C_END), "unreadable"),
    Code.FRAME_HEADERS: Case("bedrock-converse", converse(*C_CALL, _BAD_HEADERS, C_END),
                             "unreadable"),
    # A prelude that declares 8 bytes (CRC correct): nothing after it can be framed, so the
    # terminal never comes either (that rule fires first).
    Code.FRAME_LENGTH: Case("bedrock-converse", converse(*C_CALL, _NO_LENGTH, C_END),
                            "no-terminal"),
    # The usage comes after messageStop, at the request's limit: the call was decided before.
    Code.BUDGET_SPENT_AFTER_DECISION: Case("bedrock-converse", converse(
        *C_CALL, C_END, c_event("metadata", usage={"inputTokens": 9, "outputTokens": 12,
                                                   "totalTokens": 21})),
        request={"inferenceConfig": {"maxTokens": 12}}),
}

TABLES = {"openai-chat": CHAT, "openai-responses": RESPONSES, "anthropic": ANTHROPIC,
          "gemini-interactions": INTERACTIONS, "gemini-generate": GENERATE,
          "bedrock-converse": BEDROCK}
CASES: dict[Code, Case] = {code: case for table in TABLES.values() for code, case in table.items()}


def run(case: Case) -> tuple[list[Anomaly], dict[str, tuple[str, str | None]]]:
    """Every anomaly the replay reported, and each call's final (action, rule)."""
    tools = TOOLS.with_request(case.request) if case.request is not None else TOOLS
    engine = Engine(case.protocol, tools, case.limits) if case.limits is not None else None
    steps = list(replay([(0.0, case.data)], protocol=case.protocol, tools=tools, engine=engine))
    anomalies = [s.event for s in steps if isinstance(s, CallStep) and isinstance(s.event, Anomaly)]
    decided = {s.decision.call: (s.decision.action, s.decision.rule)
               for s in steps if isinstance(s, DecisionStep) and s.decision.action != "wait"}
    return anomalies, decided


# -- the meta tests ----------------------------------------------------------------------------

def test_every_code_has_a_trigger() -> None:
    assert sum(len(table) for table in TABLES.values()) == len(CASES), "a code is in two tables"
    assert set(CASES) == set(Code)


def test_every_refusing_code_names_its_rule() -> None:
    refusing = {c for c in Code if c.effect in (Effect.DISPUTES, Effect.UNREADABLE)}
    assert {c for c in refusing if CASES[c].rule is None} == set()


# -- every code, raised from bytes ------------------------------------------------------------

@pytest.mark.parametrize("code", sorted(Code), ids=str)
def test_the_code_is_raised(code: Code) -> None:
    case = CASES.get(code)
    if case is None:
        pytest.fail(f"{code} has no trigger in this table")
    anomalies, decided = run(case)
    raised = [a for a in anomalies if a.code is code]
    assert raised, f"{code} not raised; got {[str(a.code) for a in anomalies]}"
    if code.effect is Effect.HARMLESS:  # a documented shape: every call still executes
        assert decided and set(decided.values()) == {("execute", None)}, (decided, anomalies)
    if case.rule is None:
        return
    assert all(action != "execute" for action, _ in decided.values()), (decided, anomalies)
    if case.rule == UNDECIDED:
        keys = {a.key for a in raised}
        assert None not in keys and not keys & set(decided), (decided, anomalies)
        return
    if code.scope is Scope.CALL and code.effect is Effect.DISPUTES:
        concerned = {a.key for a in raised}
        assert None not in concerned, raised  # (a dispute naming no call refuses the turn instead)
    else:
        concerned = set(decided)
    assert concerned and concerned <= set(decided), (concerned, decided)
    assert {decided[key] for key in concerned} == {("refuse", case.rule)}, (decided, anomalies)
