"""One policy across providers: the same malformation gets the same verdict on every protocol,
and anomalies reach the gate only through the effect the registry declares for their code."""

from __future__ import annotations

import json

import pytest
from callscope.core.calls import TurnState
from callscope.core.demo_tools import DEMO_TOOL_DEFINITIONS
from callscope.core.engine import CallStep, DecisionStep
from callscope.core.events import Anomaly, CallOpened
from callscope.core.gate.codes import Code, Effect
from callscope.core.replay import Chunking, replay
from callscope.core.tools import ToolSet

TOOLS = ToolSet(DEMO_TOOL_DEFINITIONS)
ARGS = '{"key":"Objective"}'


def run(data: bytes, chunking: str = "whole") -> tuple[dict[str, tuple[str, str | None]], list[str]]:
    """Each call's (action, rule) and every anomaly code, in order."""
    steps = list(replay([(0.0, data)], tools=TOOLS, chunking=Chunking.parse(chunking)))
    decided = {s.decision.call: (s.decision.action, s.decision.rule)
               for s in steps if isinstance(s, DecisionStep) and s.decision.action != "wait"}
    codes = [s.event.code for s in steps if isinstance(s, CallStep) and isinstance(s.event, Anomaly)]
    return decided, codes


# -- stream builders (one call of lookup_demo_value, plus what the test adds) ----------------

def chat(text: object = "hi") -> bytes:
    def chunk(delta: dict, finish: str | None = None) -> str:
        return "data: " + json.dumps({"id": "c", "object": "chat.completion.chunk", "choices": [
            {"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n"
    return (chunk({"role": "assistant", "content": text})
            + chunk({"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": {
                "name": "lookup_demo_value", "arguments": ARGS}}]})
            + chunk({}, "tool_calls") + "data: [DONE]\n\n").encode()


def anthropic(text: object = "hi", *, early: bool = False) -> bytes:
    def ev(kind: str, **payload: object) -> str:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **payload})}\n\n"
    start = ev("message_start", message={"id": "m", "type": "message", "role": "assistant",
                                         "content": [], "usage": {"output_tokens": 1}})
    text_block = (ev("content_block_start", index=0, content_block={"type": "text", "text": ""})
                  + ev("content_block_delta", index=0, delta={"type": "text_delta", "text": text})
                  + ev("content_block_stop", index=0))
    call = (ev("content_block_start", index=1, content_block={
        "type": "tool_use", "id": "t1", "name": "lookup_demo_value", "input": {}})
        + ev("content_block_delta", index=1, delta={"type": "input_json_delta", "partial_json": ARGS})
        + ev("content_block_stop", index=1))
    body = (text_block + start + call) if early else (start + text_block + call)
    return (body + ev("message_delta", delta={"stop_reason": "tool_use"}, usage={"output_tokens": 2})
            + ev("message_stop")).encode()


def responses(text: object = "hi", *, numbers: str = "all", response: object = None,
              fragments: bool = True) -> bytes:
    """``numbers``: ``all`` (0, 1, ...), ``none``, or ``one-missing`` (the third event has none)."""
    events: list[dict] = []

    def ev(kind: str, **payload: object) -> None:
        events.append({"type": kind, **payload})
    item = {"id": "fc_1", "type": "function_call", "call_id": "c1", "name": "lookup_demo_value"}
    ev("response.created", response={"id": "r", "status": "in_progress", "output": []})
    ev("response.output_text.delta", item_id="msg_1", output_index=0, content_index=0, delta=text)
    ev("response.output_item.added", output_index=1, item={**item, "status": "in_progress",
                                                           "arguments": ""})
    if fragments:
        ev("response.function_call_arguments.delta", item_id="fc_1", output_index=1, delta=ARGS)
    ev("response.function_call_arguments.done", item_id="fc_1", output_index=1, arguments=ARGS)
    ev("response.output_item.done", output_index=1, item={**item, "status": "completed",
                                                          "arguments": ARGS})
    ev("response.completed", response={"id": "r", "status": "completed", "output": []}
       if response is None else response)
    out = []
    for n, payload in enumerate(events):
        if numbers == "all" or (numbers == "one-missing" and n != 2):
            payload["sequence_number"] = n
        out.append(f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n")
    return "".join(out).encode()


def interactions(*, early: bool = False) -> bytes:
    def ev(kind: str, **payload: object) -> str:
        return f"event: {kind}\ndata: {json.dumps({**payload, 'event_type': kind})}\n\n"
    created = ev("interaction.created", interaction={"id": "i", "status": "in_progress"})
    step = (ev("step.start", index=0, step={"id": "s", "type": "function_call",
                                            "name": "lookup_demo_value", "arguments": {}})
            + ev("step.delta", index=0, delta={"type": "arguments_delta", "arguments": ARGS})
            + ev("step.stop", index=0))
    body = (step + created) if early else (created + step)
    return (body + ev("interaction.completed", interaction={"id": "i", "status": "requires_action"})
            + "event: done\ndata: [DONE]\n\n").encode()


# -- the settled answers ---------------------------------------------------------------------

@pytest.mark.parametrize("make", [chat, anthropic, responses], ids=["chat", "anthropic", "responses"])
def test_well_formed_streams_execute(make) -> None:
    decided, codes = run(make())
    assert set(decided.values()) == {("execute", None)}, codes


@pytest.mark.parametrize("make", [chat, anthropic, responses], ids=["chat", "anthropic", "responses"])
@pytest.mark.parametrize("chunking", ["whole", "bytes:1"])
def test_assistant_text_that_is_not_a_string_refuses_every_call_on_every_protocol(make, chunking) -> None:
    decided, codes = run(make(text=5), chunking)
    assert Code.BAD_TEXT in codes
    assert set(decided.values()) == {("refuse", "unreadable")}


@pytest.mark.parametrize("make", [anthropic, interactions], ids=["anthropic", "interactions"])
def test_an_event_before_the_stream_started_refuses_every_call_on_both_block_protocols(make) -> None:
    assert set(run(make())[0].values()) == {("execute", None)}
    decided, codes = run(make(early=True))
    assert Code.EVENT_BEFORE_START in codes
    assert set(decided.values()) == {("refuse", "unreadable")}


def test_sequence_numbers_are_all_or_none() -> None:
    decided, codes = run(responses(numbers="none"))
    assert codes.count(Code.MISSING_SEQUENCE_NUMBER) == 1 and Code.SEQUENCE_GAP not in codes
    assert set(decided.values()) == {("execute", None)}
    decided, codes = run(responses(numbers="one-missing"))
    assert Code.SEQUENCE_GAP in codes
    assert set(decided.values()) == {("refuse", "unreadable")}


def test_a_terminal_event_without_its_response_object_refuses() -> None:
    decided, codes = run(responses(response="nope"))
    assert Code.BAD_RESPONSE in codes
    assert set(decided.values()) == {("refuse", "unreadable")}


def test_arguments_only_in_the_final_copy_are_the_arguments() -> None:
    decided, codes = run(responses(fragments=False))
    assert codes == [Code.ARGUMENTS_ONLY_IN_FINAL_COPY]
    assert decided == {"item:fc_1": ("execute", None)}


# -- routing by the declared effect ----------------------------------------------------------

def test_a_dispute_that_names_no_call_refuses_the_turn() -> None:
    turn = TurnState("anthropic")
    turn.apply(CallOpened(0, "k", name="f"))
    turn.apply(Anomaly(1, Code.CLOSED_TWICE, "closed again"))  # no key: it might be any call
    assert turn.unreadable is not None and turn.calls["k"].disputed is None


@pytest.mark.parametrize("effect", list(Effect))
def test_each_effect_routes_as_declared(effect: Effect) -> None:
    code = next(c for c in Code if c.effect is effect)
    turn = TurnState("anthropic")
    turn.apply(CallOpened(0, "k", name="f"))
    turn.apply(Anomaly(1, code, "seen", "k"))
    assert (turn.calls["k"].disputed is not None) is (effect is Effect.DISPUTES)
    assert (turn.unreadable is not None) is (effect is Effect.UNREADABLE)


def test_disputes_past_the_anomaly_cap_still_reach_their_call() -> None:
    turn = TurnState("anthropic")
    turn.apply(CallOpened(0, "a", name="f"))
    turn.apply(CallOpened(0, "b", name="f"))
    for _ in range(turn.limits.max_anomalies_per_code + 5):
        turn.apply(Anomaly(1, Code.CLOSED_TWICE, "again", "a"))
    turn.apply(Anomaly(2, Code.CLOSED_TWICE, "again", "b"))
    assert turn.calls["b"].disputed is not None


def test_an_undeclared_code_cannot_be_raised() -> None:
    with pytest.raises(ValueError):
        Anomaly(0, "no_such_code", "x")  # type: ignore[arg-type]
