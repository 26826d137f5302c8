"""The Gemini Interactions reader (steps and legacy content schemas): fixtures, then rules."""

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
    CallIdentified,
    CallOpened,
    ProviderError,
    StopReported,
    TurnEnded,
    UsageReported,
)
from callscope.core.providers import reader_for
from callscope.core.providers.gemini_interactions import STATUSES, GeminiInteractionsReader
from readers import FIXTURE_ROOT, arguments, closed, codes, of, opened, read_all, sse_frames, text

FIXTURES = FIXTURE_ROOT / "gemini-interactions"
DONE = b"event: done\ndata: [DONE]\n\n"


# -- helpers ---------------------------------------------------------------------------------

def run(data: bytes) -> list[CallEvent]:
    return read_all(GeminiInteractionsReader(), data)


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def sse(*payloads: dict[str, Any] | tuple[str | None, Any]) -> bytes:
    """A payload dict is sent under ``event: <its event_type>``, as on the wire; a tuple
    ``(event name or None, payload)`` sets the line explicitly (a str payload is sent as is)."""
    return sse_frames(*(item if isinstance(item, tuple) else (item["event_type"], item)
                        for item in payloads))


def stops(events: list[CallEvent]) -> list[tuple[str, bool, bool]]:
    return [(e.reason, e.cut, e.failed) for e in of(events, StopReported)]


def created(hop_id: str = "v1_a") -> dict[str, Any]:
    return {"interaction": {"id": hop_id, "status": "in_progress", "object": "interaction"},
            "event_type": "interaction.created"}


def completed(status: str = "requires_action", **extra: Any) -> dict[str, Any]:
    return {"interaction": {"id": "v1_a", "status": status, **extra},
            "event_type": "interaction.completed"}


def call_start(index: int, arguments: Any = None, call_id: str = "c1",
               name: str = "get_weather") -> dict[str, Any]:
    step = {"id": call_id, "type": "function_call", "name": name,
            "arguments": {} if arguments is None else arguments}
    return {"index": index, "step": step, "event_type": "step.start"}


def args_delta(index: int, fragment: Any, field: str = "arguments") -> dict[str, Any]:
    return {"index": index, "delta": {field: fragment, "type": "arguments_delta"},
            "event_type": "step.delta"}


def step_delta(index: int, **delta: Any) -> dict[str, Any]:
    return {"index": index, "delta": delta, "event_type": "step.delta"}


def step_stop(index: int) -> dict[str, Any]:
    return {"index": index, "event_type": "step.stop"}


# -- the recorded fixtures -------------------------------------------------------------------

def test_registry_gives_this_reader() -> None:
    reader = reader_for("gemini-interactions")
    assert isinstance(reader, GeminiInteractionsReader)
    assert reader.empty_arguments_mean_empty_object is True
    assert "done" in reader.trailers


def test_docs_google_search_plus_function_call_with_done() -> None:
    events = run(fixture("docs_streaming_google_search_plus_function_call.sse"))
    calls = opened(events)
    assert list(calls) == ["step:0", "step:3"]
    search, weather = calls["step:0"], calls["step:3"]
    assert (search.id, search.name, search.kind) == ("mkutnkgn", "google_search", "server_tool")
    assert arguments(events, "step:0") == '{"queries":["largest mountain in Europe"]}'
    assert (weather.id, weather.name, weather.kind) == ("ktr5aysg", "get_weather", "function")
    assert of(events, ArgumentsAppended) == [
        ArgumentsAppended(12, "step:3", '{"location":"Mount Elbrus, Russia"}')]
    assert of(events, CallClosed) == [CallClosed(4, "step:0"), CallClosed(13, "step:3")]
    assert stops(events) == [("requires_action", False, False)]
    assert of(events, TurnEnded) == [TurnEnded(14, "interaction.completed")]
    assert of(events, UsageReported)[-1].usage["total_tokens"] == 299
    assert codes(events) == []  # [DONE] after the terminal is the allowed trailer


def test_steps_function_call_requires_action() -> None:
    events = run(fixture("steps_schema_function_call_requires_action.reconstructed.sse"))
    call = opened(events)["step:1"]
    assert (call.id, call.name, call.kind) == ("61nzpsv4", "getWeather", "function")
    assert list(opened(events)) == ["step:1"]
    assert of(events, ArgumentsAppended) == [
        ArgumentsAppended(6, "step:1", '{"location":"San Francisco"}')]
    assert not of(events, ArgumentsSet)  # a delta arrived: the {} of step.start is not used
    assert closed(events) == ["step:1"]
    assert stops(events) == [("requires_action", False, False)]
    assert of(events, TurnEnded) == [TurnEnded(8, "interaction.completed")]
    assert codes(events) == ["missing_done"]  # the recorder kept no [DONE] frame


@pytest.mark.parametrize("name, expected", [
    ("steps_schema_basic_text.reconstructed.sse",
     "I'm doing great, thank you for asking!\n\nHow are you doing today? And what can I do "
     "for you?"),
    ("steps_schema_text_after_function_result.reconstructed.sse",
     "The weather in San Francisco right now is sunny with a temperature of 27 degrees Celsius."),
    ("LEGACY_content_schema_text_after_function_result.reconstructed.sse",
     "The weather in San Francisco right now is sunny with a temperature of 16 degrees Celsius."),
])
def test_text_turns_complete(name: str, expected: str) -> None:
    events = run(fixture(name))
    assert text(events) == expected
    assert not of(events, CallOpened)
    assert stops(events) == [("completed", False, False)]
    signal = "interaction.complete" if name.startswith("LEGACY") else "interaction.completed"
    assert [e.signal for e in of(events, TurnEnded)] == [signal]
    assert codes(events) == ["missing_done"]


def test_legacy_function_call_arrives_whole_in_one_delta() -> None:
    events = run(fixture("LEGACY_content_schema_function_call_requires_action.reconstructed.sse"))
    # content.start names only the id; the delta re-announces with the name.
    assert of(events, CallOpened | CallIdentified) == [
        CallOpened(5, "content:1", id="odkxni2w"),
        CallIdentified(6, "content:1", id="odkxni2w", name="getWeather"),
    ]
    assert of(events, ArgumentsSet) == [
        ArgumentsSet(6, "content:1", '{"location":"San Francisco"}', "serialized")]
    assert not of(events, ArgumentsAppended)
    assert of(events, CallClosed) == [CallClosed(7, "content:1")]
    assert stops(events) == [("requires_action", False, False)]
    assert of(events, TurnEnded) == [TurnEnded(8, "interaction.complete")]
    assert codes(events) == ["missing_done"]


RECONSTRUCTED = (
    "LEGACY_content_schema_function_call_requires_action.reconstructed.sse",
    "LEGACY_content_schema_text_after_function_result.reconstructed.sse",
    "steps_schema_basic_text.reconstructed.sse",
    "steps_schema_function_call_requires_action.reconstructed.sse",
    "steps_schema_text_after_function_result.reconstructed.sse",
)


def test_every_fixture_is_covered() -> None:
    docs = "docs_streaming_google_search_plus_function_call.sse"
    assert sorted(p.name for p in FIXTURES.glob("*.sse")) == sorted((*RECONSTRUCTED, docs))


@pytest.mark.parametrize("name", RECONSTRUCTED)
def test_reconstructed_fixtures_plus_done_read_cleanly(name: str) -> None:
    # The only thing these recordings lack is the trailer; with it, nothing is left to report.
    before, after = run(fixture(name)), run(fixture(name) + DONE)
    assert codes(after) == []
    assert [e for e in before if not isinstance(e, Anomaly)] == after


# -- synthetic: steps schema -----------------------------------------------------------------

def test_arguments_deltas_concatenate_byte_for_byte() -> None:
    events = run(sse(created(), call_start(0), args_delta(0, '{"city": "Os'),
                     args_delta(0, 'lo", "n": 1}'), step_stop(0), completed()) + DONE)
    assert arguments(events, "step:0") == '{"city": "Oslo", "n": 1}'
    assert of(events, CallClosed) == [CallClosed(4, "step:0")]
    assert codes(events) == []


def test_partial_arguments_field_name_is_accepted() -> None:
    events = run(sse(created(), call_start(0), args_delta(0, '{"a":1}', "partial_arguments"),
                     step_stop(0), completed()) + DONE)
    assert of(events, ArgumentsAppended) == [ArgumentsAppended(2, "step:0", '{"a":1}')]
    assert codes(events) == []


@pytest.mark.parametrize("start_arguments, expected", [
    ({}, "{}"),
    ({"city": "Oslo", "days": [1, 2]}, '{"city":"Oslo","days":[1,2]}'),
])
def test_no_delta_means_the_start_object_is_the_arguments(
        start_arguments: dict[str, Any], expected: str) -> None:
    events = run(sse(created(), call_start(0, start_arguments), step_stop(0), completed()) + DONE)
    assert of(events, ArgumentsSet) == [ArgumentsSet(2, "step:0", expected, "serialized")]
    assert codes(events) == []


def test_non_empty_start_arguments_then_deltas() -> None:
    events = run(sse(created(), call_start(0, {"city": "Oslo"}), args_delta(0, '{"city":'),
                     args_delta(0, '"Rome"}'), step_stop(0), completed()) + DONE)
    assert codes(events) == ["start_arguments_then_deltas"]
    assert of(events, Anomaly)[0].key == "step:0"
    assert not of(events, ArgumentsSet)  # never "{...}{...}": the deltas are the text
    assert arguments(events, "step:0") == '{"city":"Rome"}'


def test_text_and_thought_summary_deltas() -> None:
    events = run(sse(
        created(),
        {"index": 0, "step": {"type": "thought"}, "event_type": "step.start"},
        step_delta(0, type="thought_summary", content={"type": "text", "text": "Thinking"}),
        step_delta(0, type="thought_signature", signature="abc"),
        step_stop(0),
        {"index": 1, "step": {"type": "model_output"}, "event_type": "step.start"},
        step_delta(1, type="text", text="Hello"),
        step_stop(1),
        completed("completed")) + DONE)
    assert text(events, "reasoning") == "Thinking"
    assert text(events) == "Hello"
    assert not of(events, CallOpened) and not of(events, CallClosed)
    assert codes(events) == []


def test_unknown_delta_type_is_reported() -> None:
    events = run(sse(created(), step_delta(0, type="smell", x=1), completed()) + DONE)
    assert codes(events) == ["unknown_delta"]


@pytest.mark.parametrize("status, cut, failed, terminal", [
    ("requires_action", False, False, True), ("completed", False, False, True),
    ("incomplete", True, False, True), ("budget_exceeded", True, False, True),
    ("failed", False, True, True), ("cancelled", False, True, True),
    ("requires_continuation", False, False, False),
])
def test_status_table(status: str, cut: bool, failed: bool, terminal: bool) -> None:
    events = run(sse(created(), completed(status)))
    assert stops(events) == [(status, cut, failed)]
    assert bool(of(events, TurnEnded)) is terminal
    assert tuple(STATUSES[status]) == (cut, failed, terminal)
    assert codes(events) == (["missing_done"] if terminal else ["missing_terminal"])


def test_failed_status_with_error_is_a_provider_error() -> None:
    events = run(sse(created(), completed("failed", error={"code": "internal",
                                                           "message": "boom"})) + DONE)
    assert of(events, ProviderError) == [ProviderError(1, "boom", "internal")]
    assert stops(events) == [("failed", False, True)]
    assert of(events, TurnEnded) == [TurnEnded(1, "interaction.completed")]


def test_unknown_status_ends_the_turn_as_failed_and_is_reported() -> None:
    events = run(sse(created(), completed("snoozing")) + DONE)
    assert stops(events) == [("snoozing", False, True)]
    assert codes(events) == ["unknown_status"]
    assert of(events, TurnEnded)


def test_requires_continuation_then_next_hop_keys_apart() -> None:
    events = run(sse(
        created("v1_a"), call_start(0, call_id="c1"), args_delta(0, '{"a":'), step_stop(0),
        completed("requires_continuation"),
        created("v1_a"), call_start(0, call_id="c2"), args_delta(0, '{"b":2}'), step_stop(0),
        completed("requires_action")) + DONE)
    assert {k: c.id for k, c in opened(events).items()} == {"step:0": "c1", "hop2/step:0": "c2"}
    assert arguments(events, "step:0") == '{"a":'
    assert arguments(events, "hop2/step:0") == '{"b":2}'
    assert stops(events) == [("requires_continuation", False, False),
                             ("requires_action", False, False)]
    assert of(events, TurnEnded) == [TurnEnded(9, "interaction.completed")]
    assert codes(events) == []


def test_stream_ending_at_requires_continuation_is_not_terminal() -> None:
    events = run(sse(created(), completed("requires_continuation")))
    assert not of(events, TurnEnded)
    assert codes(events) == ["missing_terminal"]


def test_error_event() -> None:
    # Verbatim shape from the streaming guide.
    data = (b'event: error\ndata: {"error":{"message":"Deadline expired before operation could '
            b'complete.","code":"gateway_timeout"},"event_type":"error"}\n\n')
    events = run(sse(created(), call_start(0), args_delta(0, '{"a"')) + data)
    assert of(events, ProviderError) == [ProviderError(
        3, "Deadline expired before operation could complete.", "gateway_timeout")]
    assert not of(events, TurnEnded) and not of(events, CallClosed)
    assert codes(events) == ["missing_terminal"]


def test_done_before_completed_is_reported() -> None:
    events = run(sse(created(), call_start(0)) + DONE)
    assert codes(events) == ["done_before_completed", "missing_terminal"]
    assert of(events, Anomaly)[0].frame == 2


def test_repeated_done_is_reported() -> None:
    events = run(sse(created(), completed()) + DONE + DONE)
    assert codes(events) == ["repeated_done"]


def test_data_after_completed_other_than_done_is_reported() -> None:
    events = run(sse(created(), completed(), step_stop(0)) + DONE)
    assert "data_after_terminal" in codes(events)


def test_status_update_usage_is_reported() -> None:
    update = {"interaction_id": "v1_a", "status": "in_progress",
              "usage": {"total_tokens": 7}, "event_type": "interaction.status_update"}
    events = run(sse(created(), update, completed()) + DONE)
    assert of(events, UsageReported) == [UsageReported(1, {"total_tokens": 7})]


def test_step_still_open_at_completed_is_closed_and_flagged() -> None:
    events = run(sse(created(), call_start(2), args_delta(2, '{"a":1'), completed()) + DONE)
    (not_stopped,) = of(events, Anomaly)
    assert (not_stopped.code, not_stopped.key) == ("step_not_stopped", "step:2")
    assert of(events, CallClosed | CallCut) == [CallCut(3, "step:2", not_stopped.message)]


def test_open_step_at_end_of_stream_stays_open() -> None:
    events = run(sse(created(), call_start(0), args_delta(0, '{"a":1')))
    assert not of(events, CallClosed) and not of(events, TurnEnded)
    assert codes(events) == ["missing_terminal"]


def test_event_name_disagreeing_with_event_type() -> None:
    events = run(sse(created(), ("step.stop", completed())) + DONE)
    assert codes(events) == ["event_name_mismatch"]
    assert of(events, TurnEnded)  # dispatch follows event_type


def test_missing_event_line_is_fine() -> None:
    events = run(sse((None, created()), (None, completed())) + b"data: [DONE]\n\n")
    assert codes(events) == []


def test_event_before_created() -> None:
    events = run(sse(call_start(0), created(), step_stop(0), completed()) + DONE)
    assert codes(events) == ["event_before_start"]


def test_delta_for_a_step_never_started_is_passed_on() -> None:
    events = run(sse(created(), args_delta(4, '{"k":1}'), step_stop(4), completed()) + DONE)
    assert of(events, ArgumentsAppended) == [ArgumentsAppended(1, "step:4", '{"k":1}')]
    assert of(events, CallClosed) == [CallClosed(2, "step:4")]
    assert codes(events) == []


def test_stop_for_a_step_never_started() -> None:
    events = run(sse(created(), step_stop(1), completed()) + DONE)
    assert codes(events) == ["stop_without_start"]


# -- synthetic: legacy content schema --------------------------------------------------------

def test_legacy_schema_without_arguments_delta_is_flagged() -> None:
    events = run(sse(
        {"interaction": {"id": "v1", "status": "in_progress"}, "event_type": "interaction.start"},
        {"index": 0, "content": {"id": "x", "type": "function_call"}, "event_type": "content.start"},
        {"index": 0, "event_type": "content.stop"},
        {"interaction": {"id": "v1", "status": "requires_action"},
         "event_type": "interaction.complete"}) + DONE)
    assert closed(events) == ["content:0"]
    assert codes(events) == ["no_arguments"]
    assert of(events, TurnEnded) == [TurnEnded(3, "interaction.complete")]
