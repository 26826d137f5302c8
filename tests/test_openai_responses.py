"""OpenAI Responses reader: the recorded streams (PROTOCOLS.md §1), then one test per quirk."""

from __future__ import annotations

import json
from typing import Any

import pytest
from callscope.core.events import (
    Anomaly,
    ArgumentsAppended,
    CallClosed,
    CallEvent,
    CallIdentified,
    CallOpened,
    FinalCopy,
    ProviderError,
    StopReported,
    TextAppended,
    TurnEnded,
    UsageReported,
)
from callscope.core.providers import reader_for
from callscope.core.providers.openai_responses import OpenAIResponsesReader
from readers import FIXTURE_ROOT, closed, codes, of, read_all, sse_frames, text_of

DIR = FIXTURE_ROOT / "openai-responses"


def read_stream(data: bytes) -> list[CallEvent]:
    return read_all(OpenAIResponsesReader(), data)


def stream(*events: dict[str, Any], first_seq: int = 0) -> bytes:
    """Wire bytes for events: `event:` line = type, sequence_number counted unless given."""
    numbered = ({"sequence_number": first_seq + n, **event} for n, event in enumerate(events))
    return sse_frames(*((event["type"], event) for event in numbered))


def added(item_id: str | None, idx: int, name: str = "f", call_id: str = "call_1") -> dict[str, Any]:
    item: dict[str, Any] = {"type": "function_call", "status": "in_progress", "arguments": "",
                            "call_id": call_id, "name": name}
    if item_id is not None:
        item["id"] = item_id
    return {"type": "response.output_item.added", "output_index": idx, "item": item}


def delta(item_id: str | None, idx: int, text: str) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "response.function_call_arguments.delta",
                             "output_index": idx, "delta": text, "obfuscation": "Xy12"}
    if item_id is not None:
        event["item_id"] = item_id
    return event


def args_done(item_id: str, idx: int, text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "response.function_call_arguments.done", "item_id": item_id,
            "output_index": idx, "arguments": text, **extra}


def item_done(item_id: str, idx: int, text: str, name: str = "f") -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": idx,
            "item": {"id": item_id, "type": "function_call", "status": "completed",
                     "arguments": text, "call_id": "call_1", "name": name}}


def item_done_without_id(idx: int, text: str) -> dict[str, Any]:
    event = item_done("x", idx, text)
    del event["item"]["id"]
    return event


def terminal(kind: str = "completed", **response: Any) -> dict[str, Any]:
    return {"type": f"response.{kind}",
            "response": {"id": "resp_1", "status": kind, "output": [], **response}}


CREATED = {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}}


# -- recorded streams ------------------------------------------------------------------------


FC_GPT5 = "item:fc_68d9303fe7fc819ea999bda43617404203aa6e5a972b3b23"
FC_CODEX = "item:fc_01830d662ab3856501693c32151234819091cfca267e98cc5f"
RECORDED_REASONING = "reasoning_summary_then_function_call_gpt-5.1-codex-max.reconstructed.sse"

# file -> (calls {key: (call_id, name, arguments)}, stop reason, failed, usage total, terminal)
RECORDED = {
    "single_function_call_gpt-5_with_reasoning.sse": (
        {FC_GPT5: ("call_5dp5Uj0Loqn1YcyIpqSq6sLX", "get_weather",
                   '{ "location": "New York City, USA" }')},
        "completed", False, 230, "response.completed"),
    RECORDED_REASONING: (
        {FC_CODEX: ("call_AB6AaRZ1FYZB2RwS6A5vbdqn", "calculator",
                    '{"a":12,"b":7,"op":"add"}')},
        "completed", False, 162, "response.completed"),
    "followup_text_after_function_output_gpt-5.sse": (
        {}, "completed", False, 129, "response.completed"),
    "error_event_then_response_failed.reconstructed.sse": (
        {}, "failed", True, None, "response.failed"),
    "error_event_then_response_failed_insufficient_quota.sse": (
        {}, "failed", True, None, "response.failed"),
}


def test_every_recording_is_covered() -> None:
    assert sorted(p.name for p in DIR.glob("*.sse")) == sorted(RECORDED)


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_recorded_stream(name: str) -> None:
    calls, reason, failed, total, signal = RECORDED[name]
    events = read_stream((DIR / name).read_bytes())
    opened = {e.key: (e.call_id, e.name) for e in of(events, CallOpened)}
    assert opened == {k: v[:2] for k, v in calls.items()}
    for key, (_, _, arguments) in calls.items():
        assert text_of(events, key) == arguments
        # Closed once, with the provider's own final copy.
        assert closed(events).count(key) == 1
        assert [(e.key, e.arguments) for e in of(events, FinalCopy) if e.key == key] == \
            [(key, arguments)]
        assert of(events, CallOpened)[0].id == key.removeprefix("item:")
    stops = of(events, StopReported)
    assert [(s.reason, s.cut, s.failed) for s in stops] == [(reason, False, failed)]
    assert [e.signal for e in of(events, TurnEnded)] == [signal]
    assert [u.usage["total_tokens"] for u in of(events, UsageReported)] == \
        ([] if total is None else [total])
    assert codes(events) == []  # real streams: obfuscation, key order, no name on done are fine


def test_recorded_text_channels() -> None:
    events = read_stream((DIR / "followup_text_after_function_output_gpt-5.sse").read_bytes())
    assert {e.channel for e in of(events, TextAppended)} == {"text"}
    assert "".join(e.text for e in of(events, TextAppended)) == \
        "Current weather in New York City, USA: Sunny."
    events = read_stream((DIR / RECORDED_REASONING).read_bytes())
    reasoning = "".join(e.text for e in of(events, TextAppended) if e.channel == "reasoning")
    assert reasoning.startswith("**Calculating step-by-step using calculator**\n\nI'll compute 12")


def test_recorded_error_then_failed() -> None:
    events = read_stream((DIR / "error_event_then_response_failed_insufficient_quota.sse")
                         .read_bytes())
    errors = of(events, ProviderError)
    # One from the nested `error` event, one from response.failed's response.error.
    assert [(e.frame, e.code) for e in errors] == [(2, "insufficient_quota"),
                                                   (3, "insufficient_quota")]
    assert errors[0].message.startswith("You exceeded your current quota")


def test_recorded_stream_does_not_depend_on_chunking() -> None:
    data = (DIR / "single_function_call_gpt-5_with_reasoning.sse").read_bytes()
    assert read_all(OpenAIResponsesReader(), data, step=7) == read_stream(data)


def test_cut_recording_has_no_terminal() -> None:
    data = (DIR / "single_function_call_gpt-5_with_reasoning.sse").read_bytes()
    events = read_stream(data[: data.index(b"event: response.function_call_arguments.done")])
    assert of(events, TurnEnded) == [] and of(events, CallClosed) == []
    assert codes(events) == ["missing_terminal"]
    assert text_of(events, FC_GPT5) == '{ "location": "New York City, USA" }'


# -- synthetic quirks -----------------------------------------------------------------------

def test_registry_and_empty_arguments_flag() -> None:
    assert isinstance(reader_for("openai-responses"), OpenAIResponsesReader)
    assert OpenAIResponsesReader.name == "openai-responses"
    assert OpenAIResponsesReader.empty_arguments_mean_empty_object is False


def test_parallel_calls_interleaved_keep_their_own_text() -> None:
    events = read_stream(stream(
        CREATED, added("fc_a", 0, "one", "call_a"), added("fc_b", 1, "two", "call_b"),
        delta("fc_a", 0, '{"x"'), delta("fc_b", 1, '{"y"'), delta("fc_a", 0, ":1}"),
        delta("fc_b", 1, ":2}"), args_done("fc_b", 1, '{"y":2}'), args_done("fc_a", 0, '{"x":1}'),
        terminal()))
    assert [(e.key, e.call_id, e.name) for e in of(events, CallOpened)] == \
        [("item:fc_a", "call_a", "one"), ("item:fc_b", "call_b", "two")]
    assert text_of(events, "item:fc_a") == '{"x":1}' and text_of(events, "item:fc_b") == '{"y":2}'
    assert [e.key for e in of(events, CallClosed)] == ["item:fc_b", "item:fc_a"]
    assert codes(events) == []


def test_key_falls_back_to_output_index_without_item_id() -> None:
    events = read_stream(stream(CREATED, added(None, 2), delta(None, 2, "{}"),
                                item_done_without_id(2, "{}"), terminal()))
    assert [e.key for e in of(events, CallOpened)] == ["output:2"]
    assert text_of(events, "output:2") == "{}"
    assert closed(events) == ["output:2"]
    assert [(e.key, e.arguments) for e in of(events, FinalCopy)] == [("output:2", "{}")]


@pytest.mark.parametrize("extra", [{}, {"name": "f"}])
def test_arguments_done_with_or_without_name_closes_once(extra: dict[str, Any]) -> None:
    events = read_stream(stream(CREATED, added("fc_1", 0), delta("fc_1", 0, '{"a":1}'),
                                args_done("fc_1", 0, '{"a":1}', **extra),
                                item_done("fc_1", 0, '{"a":1}'), terminal()))
    assert closed(events) == ["item:fc_1"]
    assert [(e.key, e.arguments) for e in of(events, FinalCopy)] == [("item:fc_1", '{"a":1}')]
    assert len(of(events, CallOpened | CallIdentified)) == 1  # same name: nothing to re-announce
    assert codes(events) == []


def test_arguments_done_with_another_name_reannounces() -> None:
    events = read_stream(stream(CREATED, added("fc_1", 0, name="f"),
                                args_done("fc_1", 0, "{}", name="g"), terminal()))
    assert [e.name for e in of(events, CallOpened | CallIdentified)] == ["f", "g"]


def test_output_item_done_alone_closes_with_its_copy() -> None:
    events = read_stream(stream(CREATED, added("fc_1", 0), delta("fc_1", 0, "{}"),
                                item_done("fc_1", 0, "{}"), terminal()))
    assert closed(events) == ["item:fc_1"]
    assert [(e.key, e.arguments) for e in of(events, FinalCopy)] == [("item:fc_1", "{}")]


def test_differing_final_copies_are_reported_and_both_reach_the_accumulator() -> None:
    events = read_stream(stream(CREATED, added("fc_1", 0), delta("fc_1", 0, '{"a":1}'),
                                args_done("fc_1", 0, '{"a":1}'), item_done("fc_1", 0, '{"a":2}'),
                                terminal()))
    # (the second copy, which differs from the deltas, makes the gate refuse the call)
    assert [e.arguments for e in of(events, FinalCopy)] == ['{"a":1}', '{"a":2}']
    assert codes(events) == ["final_arguments_differ"]


def test_sequence_gap_is_reported_once_and_resynchronises() -> None:
    data = stream(CREATED, added("fc_1", 0)) + stream(delta("fc_1", 0, "{}"),
                                                      terminal(), first_seq=5)
    events = read_stream(data)
    gaps = [e for e in of(events, Anomaly) if e.code == "sequence_gap"]
    assert [(e.frame, e.message) for e in gaps] == [(2, "sequence_number 5, expected 2")]


def test_sequence_must_start_at_zero() -> None:
    events = read_stream(stream(CREATED, terminal(), first_seq=1))
    assert codes(events) == ["sequence_gap"]
    assert of(events, Anomaly)[0].message == "sequence_number 1, expected 0"


def test_missing_sequence_number_is_reported_once() -> None:
    body = json.dumps(terminal())
    events = read_stream(f"event: response.completed\ndata: {body}\n\n".encode() * 2)
    assert codes(events).count("missing_sequence_number") == 1


def test_duplicate_output_item_added() -> None:
    events = read_stream(stream(CREATED, added("fc_1", 0), added("fc_1", 0),
                                args_done("fc_1", 0, "{}"), terminal()))
    dupes = [e for e in of(events, Anomaly) if e.code == "duplicate_item"]
    assert [(e.frame, e.key) for e in dupes] == [(2, "item:fc_1")]


def test_rotating_item_ids_are_attributed_by_output_index() -> None:
    events = read_stream(stream(
        CREATED, added("id-3", 1), delta("id-4", 1, '{"q"'), delta("id-5", 1, ':"r"}'),
        args_done("id-6", 1, '{"q":"r"}'), item_done("id-7", 1, '{"q":"r"}'), terminal()))
    assert text_of(events, "item:id-3") == '{"q":"r"}'
    assert closed(events) == ["item:id-3"]
    assert [(e.key, e.arguments) for e in of(events, FinalCopy)] == [("item:id-3", '{"q":"r"}')]
    changed = [e for e in of(events, Anomaly) if e.code == "item_id_changed"]
    assert [(e.frame, e.key) for e in changed] == [(2, "item:id-3")]  # once per call
    assert {e.key for e in events if hasattr(e, "key") and e.key} == {"item:id-3"}


def test_delta_for_an_unknown_item_is_passed_on_under_its_own_key() -> None:
    events = read_stream(stream(CREATED, delta("fc_9", 4, "{"), terminal()))
    assert [(e.key, e.fragment) for e in of(events, ArgumentsAppended)] == [("item:fc_9", "{")]


@pytest.mark.parametrize("reason,failed", [("max_output_tokens", False), ("max_tokens", False),
                                           ("content_filter", True)])
def test_incomplete_is_cut(reason: str, failed: bool) -> None:
    events = read_stream(stream(CREATED, added("fc_1", 0), delta("fc_1", 0, '{"a":'),
                                terminal("incomplete", incomplete_details={"reason": reason},
                                         usage={"total_tokens": 9})))
    assert [(s.reason, s.cut, s.failed) for s in of(events, StopReported)] == \
        [(reason, True, failed)]
    assert [e.signal for e in of(events, TurnEnded)] == ["response.incomplete"]
    assert [u.usage for u in of(events, UsageReported)] == [{"total_tokens": 9}]
    assert of(events, CallClosed) == []
    assert codes(events) == []


def test_unknown_incomplete_reason_is_still_cut_and_reported() -> None:
    events = read_stream(stream(CREATED, terminal("incomplete",
                                                  incomplete_details={"reason": "new_reason"})))
    assert [(s.reason, s.cut) for s in of(events, StopReported)] == [("new_reason", True)]
    assert codes(events) == ["unknown_incomplete_reason"]


def test_failed_reports_the_response_error() -> None:
    events = read_stream(stream(CREATED, terminal(
        "failed", error={"code": "server_error", "message": "The model failed"})))
    assert [(e.message, e.code) for e in of(events, ProviderError)] == \
        [("The model failed", "server_error")]
    assert [(s.reason, s.cut, s.failed) for s in of(events, StopReported)] == \
        [("failed", False, True)]
    assert [e.signal for e in of(events, TurnEnded)] == ["response.failed"]


def test_error_event_in_both_shapes_is_not_terminal() -> None:
    nested = {"type": "error", "error": {"type": "server_error", "code": "overloaded",
                                         "message": "busy", "param": None}}
    flat = {"type": "error", "code": "rate_limit", "message": "slow down", "param": None}
    events = read_stream(stream(CREATED, nested, flat))
    assert [(e.message, e.code) for e in of(events, ProviderError)] == \
        [("busy", "overloaded"), ("slow down", "rate_limit")]
    assert of(events, TurnEnded) == []
    assert codes(events) == ["missing_terminal"]


def test_done_sentinel_is_not_part_of_the_protocol() -> None:
    events = read_stream(stream(CREATED, terminal()) + b"data: [DONE]\n\n")
    assert codes(events) == ["unexpected_done"]
    assert len(of(events, TurnEnded)) == 1


def test_text_reasoning_and_refusal_channels() -> None:
    events = read_stream(stream(
        CREATED,
        {"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": 0,
         "summary_index": 0, "delta": "think", "obfuscation": "abc"},
        {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 1,
         "content_index": 0, "delta": "Hi", "logprobs": []},
        {"type": "response.refusal.delta", "item_id": "msg_1", "output_index": 1,
         "content_index": 1, "delta": "No."},
        terminal()))
    assert [(e.channel, e.text) for e in of(events, TextAppended)] == \
        [("reasoning", "think"), ("text", "Hi"), ("refusal", "No.")]
    assert codes(events) == []


def test_event_line_must_match_data_type() -> None:
    body = json.dumps({**terminal(), "sequence_number": 0})
    events = read_stream(f"event: response.failed\ndata: {body}\n\n".encode())
    assert codes(events) == ["event_name_mismatch"]
    assert [e.signal for e in of(events, TurnEnded)] == ["response.completed"]


def test_unhandled_item_type_is_reported() -> None:
    item = {"type": "response.output_item.added", "output_index": 0,
            "item": {"id": "ctc_1", "type": "custom_tool_call", "input": ""}}
    events = read_stream(stream(CREATED, item, terminal()))
    assert codes(events) == ["unhandled_item"]
    assert of(events, CallOpened) == []


def test_call_without_done_before_completed_is_reported() -> None:
    events = read_stream(stream(CREATED, added("fc_1", 0), delta("fc_1", 0, "{}"), terminal()))
    assert codes(events) == ["call_not_done"]


def test_call_only_in_the_final_response_is_reported() -> None:
    final = terminal(output=[{"id": "fc_z", "type": "function_call", "name": "f",
                              "arguments": "{}", "call_id": "call_z"}])
    events = read_stream(stream(CREATED, final))
    assert codes(events) == ["call_only_in_final_response"]


def test_response_id_change_is_reported_once() -> None:
    other = {"type": "response.in_progress", "response": {"id": "resp_2", "status": "in_progress"}}
    events = read_stream(stream(CREATED, other, other, terminal()))
    assert codes(events) == ["response_id_changed"]
