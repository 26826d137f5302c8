"""The Anthropic Messages reader: every recorded fixture, then one synthetic stream per rule."""

from __future__ import annotations

from typing import Any

import pytest
from callscope.core.events import (
    Anomaly,
    ArgumentsAppended,
    ArgumentsSet,
    CallClosed,
    CallCut,
    CallEvent,
    CallOpened,
    ProviderError,
    StopReported,
    TurnEnded,
    UsageReported,
)
from callscope.core.providers import reader_for
from callscope.core.providers.anthropic import STOP_REASONS, AnthropicReader
from readers import FIXTURE_ROOT, arguments, closed, codes, of, opened, read_all, text
from readers import sse_frames as sse  # (event name or None, payload) pairs, as Anthropic frames them

FIXTURES = FIXTURE_ROOT / "anthropic"


# -- helpers ---------------------------------------------------------------------------------

def run(data: bytes) -> list[CallEvent]:
    return read_all(AnthropicReader(), data)


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def ev(payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """An event whose ``event:`` line equals its ``data.type``, as on the wire."""
    return payload["type"], payload


def stop(events: list[CallEvent]) -> StopReported:
    (reported,) = of(events, StopReported)
    return reported


def start(msg_id: str = "msg_1") -> tuple[str, dict[str, Any]]:
    return ev({"type": "message_start", "message": {
        "id": msg_id, "type": "message", "role": "assistant", "content": [],
        "usage": {"input_tokens": 10, "output_tokens": 1}}})


def tool_start(index: int, tool_id: str = "toolu_1", name: str = "get_weather",
               block_type: str = "tool_use", **extra: Any) -> tuple[str, dict[str, Any]]:
    block = {"type": block_type, "id": tool_id, "name": name, "input": {}, **extra}
    return ev({"type": "content_block_start", "index": index, "content_block": block})


def json_delta(index: int, fragment: str) -> tuple[str, dict[str, Any]]:
    return ev({"type": "content_block_delta", "index": index,
               "delta": {"type": "input_json_delta", "partial_json": fragment}})


def block_stop(index: int) -> tuple[str, dict[str, Any]]:
    return ev({"type": "content_block_stop", "index": index})


def message_delta(reason: str | None = "tool_use", **usage: Any) -> tuple[str, dict[str, Any]]:
    return ev({"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": None},
               "usage": usage or {"output_tokens": 5}})


MESSAGE_STOP = ev({"type": "message_stop"})


# -- the recorded fixtures -------------------------------------------------------------------

def test_registry_gives_this_reader() -> None:
    reader = reader_for("anthropic")
    assert isinstance(reader, AnthropicReader)
    assert reader.empty_arguments_mean_empty_object is True


def test_every_fixture_is_covered() -> None:
    covered = {
        "basic_text_end_turn.sse", "duplicate_message_start_SYNTHETIC.sse",
        "max_tokens_mid_tool_input.sse", "message_delta_carries_input_tokens.sse",
        "refusal_no_content_blocks.sse", "refusal_stop_details.sse",
        "server_tool_use_then_refusal_SYNTHETIC.sse", "spliced_message_start_SYNTHETIC.sse",
        "tool_no_args_empty_partial_json.sse", "tool_use_text_then_tool.sse",
    }
    assert {p.name for p in FIXTURES.glob("*.sse")} == covered


def test_basic_text_end_turn_last_block_unterminated() -> None:
    events = run(fixture("basic_text_end_turn.sse"))
    assert text(events) == "Hello there!"
    assert not of(events, CallOpened)
    assert stop(events) == StopReported(7, "end_turn", cut=False, failed=False)
    # The file ends inside the message_stop block (no blank line): it is never dispatched.
    assert not of(events, TurnEnded)
    assert codes(events) == ["missing_terminal"]


def test_duplicate_message_start_same_id_is_benign() -> None:
    events = run(fixture("duplicate_message_start_SYNTHETIC.sse"))
    assert codes(events) == ["duplicate_message_start"]
    assert of(events, Anomaly)[0].frame == 1
    assert text(events) == "Hello, World!"
    assert of(events, TurnEnded) == [TurnEnded(6, "message_stop")]


def test_max_tokens_mid_tool_input_closes_the_unstopped_block() -> None:
    events = run(fixture("max_tokens_mid_tool_input.sse"))
    call = opened(events)["block:1"]
    assert (call.id, call.name, call.kind) == ("toolu_01EKqbqmZrGRXy18eN7m9kvY", "make_file",
                                               "function")
    assert arguments(events, "block:1") == (
        '{"filename": "taxes.txt", "lines_of_text": [\n"# COMPREHENSIVE TAX GUIDE FOR '
        'INDIVIDUALS WITH MULTIPLE W-2s",\n"",\n"## INTRODUCTION",\n"",\n"Filing taxes')
    # No content_block_stop on the wire: message_delta (frame 14) closes it and says so.
    not_stopped = [a for a in of(events, Anomaly) if a.code == "block_not_stopped"]
    assert [(a.frame, a.key) for a in not_stopped] == [(14, "block:1")]
    assert of(events, CallClosed | CallCut) == [CallCut(14, "block:1", not_stopped[0].message)]
    assert stop(events) == StopReported(14, "max_tokens", cut=True, failed=False)
    assert events.index(of(events, CallCut)[0]) < events.index(stop(events))
    assert text(events).startswith("I'll create a comprehensive tax guide")
    assert not of(events, TurnEnded)  # message_stop is the unterminated last block
    assert codes(events) == ["block_not_stopped", "missing_terminal"]


def test_message_delta_usage_later_value_wins() -> None:
    events = run(fixture("message_delta_carries_input_tokens.sse"))
    usages = of(events, UsageReported)
    assert usages[0].usage == {"input_tokens": 43, "output_tokens": 1}
    assert usages[-1].usage == {"input_tokens": 61, "output_tokens": 2}
    assert text(events) == "pong"
    assert of(events, TurnEnded) == [TurnEnded(7, "message_stop")]
    assert codes(events) == []


def test_refusal_without_content_blocks() -> None:
    events = run(fixture("refusal_no_content_blocks.sse"))
    assert not of(events, CallOpened)
    assert stop(events) == StopReported(2, "refusal", cut=False, failed=True)
    assert text(events, "refusal").startswith("This request triggered restrictions")
    assert of(events, TurnEnded) == [TurnEnded(3, "message_stop")]
    assert codes(events) == []


def test_refusal_stop_details_file_ends_without_blank_line() -> None:
    events = run(fixture("refusal_stop_details.sse"))
    assert stop(events) == StopReported(3, "refusal", cut=False, failed=True)
    assert text(events, "refusal") == "This request was refused due to policy."
    assert not of(events, TurnEnded)
    assert codes(events) == ["missing_terminal"]


def test_server_tool_use_then_refusal() -> None:
    events = run(fixture("server_tool_use_then_refusal_SYNTHETIC.sse"))
    assert list(opened(events)) == ["block:0"]  # web_search_tool_result is not a call
    call = opened(events)["block:0"]
    assert (call.id, call.name, call.kind) == ("srvtoolu_fixture_a_0001", "web_search",
                                               "server_tool")
    assert arguments(events, "block:0") == '{"query": "solar eclipse viewing safety news 2026"}'
    assert closed(events) == ["block:0"]
    assert stop(events) == StopReported(16, "refusal", cut=False, failed=True)
    assert text(events) == "Here's a summary of this year's solar eclipses and how"
    assert of(events, TurnEnded) == [TurnEnded(17, "message_stop")]
    assert codes(events) == []


def test_spliced_message_start_keys_the_second_message_apart() -> None:
    events = run(fixture("spliced_message_start_SYNTHETIC.sse"))
    calls = opened(events)
    assert list(calls) == ["block:1", "msg2/block:1"]
    assert (calls["block:1"].id, calls["msg2/block:1"].id) == ("toolu_first", "toolu_second")
    # Never mixed: the first message's fragment stays alone, the second is whole.
    assert arguments(events, "block:1") == '{"value":"Spark'
    assert arguments(events, "msg2/block:1") == '{"value":"Sparkle Day"}'
    # The first message's open tool block is closed (and flagged) at the splice, frame 7.
    assert codes(events) == ["spliced_message_start", "block_not_stopped"]
    cut = of(events, Anomaly)[1].message  # (so the gate refuses it as truncated)
    assert "message msg_first was replaced by msg_second" in cut
    assert of(events, CallClosed | CallCut) == [CallCut(7, "block:1", cut),
                                                CallClosed(14, "msg2/block:1")]
    assert [a.frame for a in of(events, Anomaly)] == [7, 7]
    assert text(events, "reasoning") == "I will call the tool.Let me call the tool."
    assert stop(events).reason == "tool_use"
    assert of(events, TurnEnded) == [TurnEnded(16, "message_stop")]


def test_tool_without_arguments_sends_one_empty_fragment() -> None:
    events = run(fixture("tool_no_args_empty_partial_json.sse"))
    call = opened(events)["block:1"]
    assert (call.id, call.name) == ("toolu_01QE1WLsSVp5hy5Q3GmGTmjP", "updateIssueList")
    assert of(events, ArgumentsAppended) == [ArgumentsAppended(9, "block:1", "")]
    assert not of(events, ArgumentsSet)
    assert closed(events) == ["block:1"]
    assert stop(events).reason == "tool_use"
    assert of(events, TurnEnded) == [TurnEnded(12, "message_stop")]
    assert codes(events) == []


def test_text_then_tool_use_file_ends_without_line_end() -> None:
    events = run(fixture("tool_use_text_then_tool.sse"))
    call = opened(events)["block:1"]
    assert (call.id, call.name, call.kind) == ("toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather",
                                               "function")
    assert [e.fragment for e in of(events, ArgumentsAppended)] == [
        "", '{"locati', 'on": "P', "ar", 'is"}']
    assert arguments(events, "block:1") == '{"location": "Paris"}'
    assert of(events, CallClosed) == [CallClosed(12, "block:1")]
    assert stop(events) == StopReported(13, "tool_use", cut=False, failed=False)
    assert text(events) == "I'll check the current weather in Paris for you."
    assert not of(events, TurnEnded)
    assert codes(events) == ["missing_terminal"]


@pytest.mark.parametrize("name, ending", [
    ("basic_text_end_turn.sse", b"\n\n"),
    ("max_tokens_mid_tool_input.sse", b"\n\n"),
    ("tool_use_text_then_tool.sse", b"\n\n"),
    ("refusal_stop_details.sse", b"\n"),
])
def test_the_unterminated_files_end_the_turn_once_their_block_is_ended(
        name: str, ending: bytes) -> None:
    # What the SSE rules withhold is exactly the message_stop block: with its blank line added
    # the reader sees the terminal event and nothing else changes.
    before, after = run(fixture(name)), run(fixture(name) + ending)
    assert [e for e in after if not isinstance(e, TurnEnded)] == [
        e for e in before if not (isinstance(e, Anomaly) and e.code == "missing_terminal")]
    assert [e.signal for e in of(after, TurnEnded)] == ["message_stop"]


# -- synthetic: one rule each ----------------------------------------------------------------

def test_ping_yields_nothing() -> None:
    events = run(sse(start(), ("ping", '{"type": "ping"}'), message_delta("end_turn"),
                     MESSAGE_STOP))
    assert codes(events) == []
    assert [type(e).__name__ for e in events] == [
        "UsageReported", "StopReported", "UsageReported", "TurnEnded"]


def test_padded_data_lines_parse() -> None:
    data = (b'event: message_start\ndata: {"type":"message_start","message":{"id":"m"}}   \n\n'
            b'event: message_stop\ndata: {"type":"message_stop" }          \n\n')
    events = run(data)
    assert codes(events) == ["missing_stop_reason"]  # (no message_delta in this stream)
    assert of(events, TurnEnded) == [TurnEnded(1, "message_stop")]


def test_tool_call_deltas_and_stop() -> None:
    events = run(sse(start(), tool_start(0, "toolu_a", "lookup"), json_delta(0, ""),
                     json_delta(0, '{"q": '), json_delta(0, '"x"}'), block_stop(0),
                     message_delta(), MESSAGE_STOP))
    assert opened(events)["block:0"] == CallOpened(1, "block:0", id="toolu_a", name="lookup")
    assert [e.fragment for e in of(events, ArgumentsAppended)] == ["", '{"q": ', '"x"}']
    assert of(events, CallClosed) == [CallClosed(5, "block:0")]
    assert codes(events) == []


def test_server_tool_use_block_is_a_server_tool_call() -> None:
    events = run(sse(start(), tool_start(2, "srvtoolu_1", "web_search", "server_tool_use"),
                     block_stop(2)))
    assert opened(events)["block:2"].kind == "server_tool"


def test_text_and_thinking_blocks_are_text_channels() -> None:
    events = run(sse(
        start(),
        ev({"type": "content_block_start", "index": 0,
            "content_block": {"type": "thinking", "thinking": ""}}),
        ev({"type": "content_block_delta", "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "hmm"}}),
        ev({"type": "content_block_delta", "index": 0,
            "delta": {"type": "signature_delta", "signature": "sig"}}),
        block_stop(0),
        ev({"type": "content_block_start", "index": 1,
            "content_block": {"type": "text", "text": "Hi"}}),
        ev({"type": "content_block_delta", "index": 1,
            "delta": {"type": "text_delta", "text": " there"}}),
        block_stop(1)))
    assert text(events, "reasoning") == "hmm"
    assert text(events, "text") == "Hi there"
    assert not of(events, CallOpened) and not of(events, CallClosed)
    assert codes(events) == ["missing_terminal"]


def test_unknown_delta_type_is_reported() -> None:
    events = run(sse(start(), ev({"type": "content_block_delta", "index": 0,
                                  "delta": {"type": "hologram_delta", "x": 1}})))
    assert codes(events) == ["unknown_delta", "missing_terminal"]


def test_blocks_open_at_message_stop_are_closed_and_flagged() -> None:
    # No message_delta at all: message_stop closes the tool block and the text block.
    events = run(sse(start(), ev({"type": "content_block_start", "index": 0,
                                  "content_block": {"type": "text", "text": ""}}),
                     tool_start(1), json_delta(1, '{"a":'), MESSAGE_STOP))
    flagged = [(a.code, a.key, a.frame) for a in of(events, Anomaly)]
    assert flagged == [("block_not_stopped", "block:0", 4), ("block_not_stopped", "block:1", 4),
                       ("missing_stop_reason", None, 4)]
    # Text blocks are not calls; the tool block is closed as cut: the gate refuses it.
    assert of(events, CallClosed | CallCut) == [CallCut(4, "block:1", of(events, Anomaly)[1].message)]
    assert of(events, TurnEnded) == [TurnEnded(4, "message_stop")]


def test_open_block_at_end_of_stream_stays_open() -> None:
    # No message_delta / message_stop: nothing closes the call; the turn is truncated.
    events = run(sse(start(), tool_start(1), json_delta(1, '{"a":')))
    assert not of(events, CallClosed)
    assert codes(events) == ["missing_terminal"]


@pytest.mark.parametrize("reason, cut, failed", [
    ("end_turn", False, False), ("tool_use", False, False), ("stop_sequence", False, False),
    ("pause_turn", False, False), ("max_tokens", True, False),
    ("model_context_window_exceeded", True, False), ("refusal", False, True),
])
def test_stop_reason_table(reason: str, cut: bool, failed: bool) -> None:
    events = run(sse(start(), message_delta(reason), MESSAGE_STOP))
    assert stop(events) == StopReported(1, reason, cut=cut, failed=failed)
    assert codes(events) == []
    assert STOP_REASONS[reason] == (cut, failed, True)  # (cut, failed, terminal)


def test_unknown_stop_reason_is_reported_and_taken_as_failed() -> None:
    events = run(sse(start(), message_delta("napping"), MESSAGE_STOP))
    assert stop(events) == StopReported(1, "napping", cut=False, failed=True)
    assert codes(events) == ["unknown_stop_reason"]


def test_usage_is_cumulative_field_by_field() -> None:
    events = run(sse(start(), message_delta("end_turn", output_tokens=3),
                     message_delta("end_turn", output_tokens=9, input_tokens=12), MESSAGE_STOP))
    assert [e.usage for e in of(events, UsageReported)] == [
        {"input_tokens": 10, "output_tokens": 1},
        {"input_tokens": 10, "output_tokens": 3},
        {"input_tokens": 12, "output_tokens": 9},
    ]


def test_error_event_after_200_is_a_provider_error_not_a_terminal() -> None:
    events = run(sse(start(), tool_start(1), json_delta(1, '{"a":'),
                     ("error", {"type": "error",
                                "error": {"type": "overloaded_error", "message": "Overloaded"}})))
    assert of(events, ProviderError) == [ProviderError(3, "Overloaded", "overloaded_error")]
    assert not of(events, TurnEnded)
    assert codes(events) == ["missing_terminal"]


def test_second_message_start_same_id_keeps_keys() -> None:
    events = run(sse(start("msg_a"), tool_start(0), start("msg_a"), json_delta(0, "{}"),
                     block_stop(0)))
    assert codes(events) == ["duplicate_message_start", "missing_terminal"]
    assert {e.key for e in of(events, ArgumentsAppended)} == {"block:0"}
    assert closed(events) == ["block:0"]


def test_second_message_start_other_id_prefixes_keys() -> None:
    events = run(sse(start("msg_a"), tool_start(0, "toolu_a"), json_delta(0, '{"x'),
                     start("msg_b"), tool_start(0, "toolu_b"), json_delta(0, "{}"), block_stop(0),
                     start("msg_c"), tool_start(0, "toolu_c"), block_stop(0)))
    assert {k: c.id for k, c in opened(events).items()} == {
        "block:0": "toolu_a", "msg2/block:0": "toolu_b", "msg3/block:0": "toolu_c"}
    assert arguments(events, "block:0") == '{"x'
    assert arguments(events, "msg2/block:0") == "{}"
    # msg_b's stopped block is closed again, as cut, when msg_c replaces it: nothing vouched
    # for it (no message_delta or message_stop), so the gate refuses it.
    assert closed(events) == ["block:0", "msg2/block:0", "msg2/block:0", "msg3/block:0"]
    assert [isinstance(e, CallCut) for e in of(events, CallClosed | CallCut)] == [True, False, True, False]
    assert codes(events) == ["spliced_message_start", "block_not_stopped",
                             "spliced_message_start", "missing_terminal"]


def test_event_line_disagreeing_with_data_type() -> None:
    # Dispatch follows data.type; the disagreement is reported.
    events = run(sse(start(), ("content_block_stop", {"type": "message_stop"})))
    assert codes(events) == ["event_name_mismatch", "missing_stop_reason"]
    assert of(events, TurnEnded) == [TurnEnded(1, "message_stop")]


def test_missing_event_line_is_reported() -> None:
    events = run(sse(start(), (None, {"type": "message_stop"})))
    assert codes(events) == ["event_name_missing", "missing_stop_reason"]
    assert of(events, TurnEnded) == [TurnEnded(1, "message_stop")]


def test_event_before_message_start() -> None:
    events = run(sse(("ping", {"type": "ping"}), tool_start(0), start(), block_stop(0)))
    assert codes(events) == ["event_before_start", "missing_terminal"]
    assert of(events, Anomaly)[0].frame == 1
    assert opened(events)["block:0"].id == "toolu_1"  # still read


def test_delta_for_a_block_never_started_is_passed_on() -> None:
    # Unknown keys are the accumulator's to report; the reader emits what the wire says and
    # closes it when the block stops.
    events = run(sse(start(), json_delta(3, '{"k": 1}'), block_stop(3)))
    assert of(events, ArgumentsAppended) == [ArgumentsAppended(1, "block:3", '{"k": 1}')]
    assert of(events, CallClosed) == [CallClosed(2, "block:3")]
    assert codes(events) == ["missing_terminal"]


def test_text_delta_for_a_block_never_started() -> None:
    events = run(sse(start(), ev({"type": "content_block_delta", "index": 0,
                                  "delta": {"type": "text_delta", "text": "x"}}), block_stop(0)))
    assert text(events) == "x"
    assert codes(events) == ["delta_without_start", "missing_terminal"]


def test_stop_for_a_block_never_started() -> None:
    events = run(sse(start(), block_stop(5)))
    assert codes(events) == ["stop_without_start", "missing_terminal"]
    assert not of(events, CallClosed)


def test_non_empty_start_input_without_deltas_is_the_input() -> None:
    events = run(sse(start(), tool_start(0, input={"city": "Oslo"}), block_stop(0)))
    assert of(events, ArgumentsSet) == [ArgumentsSet(2, "block:0", '{"city":"Oslo"}')]
    assert codes(events) == ["missing_terminal"]


def test_non_empty_start_input_then_deltas_is_flagged_not_prefixed() -> None:
    events = run(sse(start(), tool_start(0, input={"city": "Oslo"}),
                     json_delta(0, '{"city":'), json_delta(0, '"Rome"}'), block_stop(0)))
    assert not of(events, ArgumentsSet)
    assert arguments(events, "block:0") == '{"city":"Rome"}'
    assert codes(events) == ["start_input_then_deltas", "missing_terminal"]


def test_bad_index_is_reported() -> None:
    events = run(sse(start(), ev({"type": "content_block_stop", "index": "1"})))
    assert codes(events) == ["bad_index", "missing_terminal"]


def test_later_fragments_get_the_first_fragments_checks() -> None:
    """After a block's first fragment, fragments take a shorter path; what it does not check
    (an index that is a boolean, which equals 1 as a dict key; a partial_json that is not a
    string) still goes to the checks of the first."""
    bad = [ev({"type": "content_block_delta", "index": True,
               "delta": {"type": "input_json_delta", "partial_json": "X"}}),
           ev({"type": "content_block_delta", "index": 1,
               "delta": {"type": "input_json_delta", "partial_json": 7}})]
    events = run(sse(start(), tool_start(1), json_delta(1, '{"city":'), *bad,
                     json_delta(1, '"Rome"}'), block_stop(1)))
    assert arguments(events, "block:1") == '{"city":"Rome"}'
    assert codes(events) == ["bad_index", "bad_delta", "missing_terminal"]


def test_data_after_message_stop_is_reported() -> None:
    events = run(sse(start(), MESSAGE_STOP, ("ping", {"type": "ping"})))
    assert codes(events) == ["missing_stop_reason", "data_after_terminal"]
