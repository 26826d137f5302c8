"""OpenAI Chat Completions reader: the recorded streams (PROTOCOLS.md §2), then one test per quirk."""

from __future__ import annotations

import json
from typing import Any

import pytest
from callscope.core.events import (
    Anomaly,
    ArgumentsAppended,
    ArgumentsSet,
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
from callscope.core.providers.openai_chat import OpenAIChatReader
from readers import FIXTURE_ROOT, codes, of, read_all, text_of

DIR = FIXTURE_ROOT / "openai-chat"
DONE = b"data: [DONE]\n\n"


def read_stream(data: bytes) -> list[CallEvent]:
    return read_all(OpenAIChatReader(), data)


def chunk(*calls: dict[str, Any], choice: int = 0, finish: str | None = None,
          **delta: Any) -> bytes:
    """One data-only frame holding one choice's delta."""
    if calls:
        delta["tool_calls"] = list(calls)
    body = {"id": "chatcmpl-1", "object": "chat.completion.chunk",
            "choices": [{"index": choice, "delta": delta, "finish_reason": finish}]}
    return f"data: {json.dumps(body)}\n\n".encode()


def tc(index: int | None = None, id: str | None = None, name: str | None = None,
       args: Any = None) -> dict[str, Any]:
    """One tool_calls fragment; None fields are left out, as gateways leave them out."""
    fragment: dict[str, Any] = {}
    if index is not None:
        fragment["index"] = index
    if id is not None:
        fragment["id"], fragment["type"] = id, "function"
    function = {k: v for k, v in (("name", name), ("arguments", args)) if v is not None}
    if function:
        fragment["function"] = function
    return fragment


def identities(events: list[CallEvent]) -> list[tuple[str, str | None, str | None]]:
    return [(e.key, e.id, e.name) for e in of(events, CallOpened | CallIdentified)]


# -- recorded streams ------------------------------------------------------------------------


# file -> (calls [(key, id, name, arguments)], text, (finish_reason, cut, failed),
#          completion tokens, terminal signal or None)
RECORDED: dict[str, Any] = {
    "parallel_tool_calls_two_functions.sse": (
        [("choice0/call0", "call_JMW1whyEaYG438VE1OIflxA2", "GetWeatherArgs",
          '{"city": "Edinburgh", "country": "GB", "units": "c"}'),
         ("choice0/call1", "call_DNYTawLBoN8fj3KN6qU9N1Ou", "get_stock_price",
          '{"ticker": "AAPL", "exchange": "NASDAQ"}')],
        "", ("tool_calls", False, False), 60, "[DONE]"),
    "single_tool_call_nonstrict.sse": (
        [("choice0/call0", "call_4XzlGBLtUe9dy3GVNV4jhq7h", "get_weather",
          '{"city":"New York City"}')],
        "", ("tool_calls", False, False), 16, "[DONE]"),
    "single_tool_call_strict.sse": (
        [("choice0/call0", "call_CTf1nWJLqSeRgDqaCG27xZ74", "get_weather",
          '{"city":"San Francisco","state":"CA"}')],
        "", ("tool_calls", False, False), 19, "[DONE]"),
    "single_tool_call_pydantic.sse": (
        [("choice0/call0", "call_c91SqDXlYFuETYv8mUHzz6pp", "GetWeatherArgs",
          '{"city":"Edinburgh","country":"UK","units":"c"}')],
        "", ("tool_calls", False, False), 24, "[DONE]"),
    "finish_reason_length.sse": ([], '{"', ("length", True, False), 1, "[DONE]"),
    "refusal_stream.sse": (
        [], "I'm sorry, I can't assist with that request.", ("stop", False, False), 11, "[DONE]"),
    "plain_text_stop.sse": (
        [], "I'm unable to provide real-time weather updates. To get the current weather in San "
            "Francisco, I recommend checking a reliable weather website or a weather app.",
        ("stop", False, False), 30, "[DONE]"),
    "azure_prompt_filter_first_chunk_obfuscation.sse": (
        [], "Capital of Denmark.", ("stop", False, False), 78, "[DONE]"),
    "xai_grok_whole_tool_call_in_one_chunk.sse": (
        [("choice0/call0", "call_79382389", "weather", '{"location":"San Francisco"}')],
        None, ("tool_calls", False, False), 26, "[DONE]"),
    # The file ends "data: [DONE]\n" with no blank line: the block is never dispatched, so a
    # strict reader has no terminal signal (fixtures/SOURCES.md, "Read these…").
    "openai_compat_gateway_anthropic_index_starts_at_1.sse": (
        [("choice0/call1", "toolu_sanitized", "read_file", '{"path": "a.txt"}')],
        "Reading it.", ("tool_calls", False, False), None, None),
}


def test_every_recording_is_covered() -> None:
    assert sorted(p.name for p in DIR.glob("*.sse")) == sorted(RECORDED)


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_recorded_stream(name: str) -> None:
    calls, text, stop, tokens, signal = RECORDED[name]
    events = read_stream((DIR / name).read_bytes())
    assert identities(events) == [(key, id_, fn) for key, id_, fn, _ in calls]
    for key, _, _, arguments in calls:
        assert text_of(events, key) == arguments
    # finish_reason closes every call of the choice, without a copy of the arguments.
    assert [e.key for e in of(events, CallClosed)] == [key for key, *_ in calls]
    assert not of(events, FinalCopy)
    if text is not None:
        shown = "".join(e.text for e in of(events, TextAppended) if e.channel != "reasoning")
        assert shown == text
    assert [(s.reason, s.cut, s.failed) for s in of(events, StopReported)] == [stop]
    assert [u.usage["completion_tokens"] for u in of(events, UsageReported)] == \
        ([] if tokens is None else [tokens])
    assert [e.signal for e in of(events, TurnEnded)] == ([] if signal is None else [signal])
    assert codes(events) == ([] if signal else ["missing_terminal"])


def test_recorded_channels() -> None:
    refusal = read_stream((DIR / "refusal_stream.sse").read_bytes())
    assert {e.channel for e in of(refusal, TextAppended)} == {"refusal"}
    grok = read_stream((DIR / "xai_grok_whole_tool_call_in_one_chunk.sse").read_bytes())
    reasoning = "".join(e.text for e in of(grok, TextAppended) if e.channel == "reasoning")
    assert reasoning.startswith("First, the user is asking about the weather in San Francisco.")
    # The whole call arrives in one chunk: one open, one fragment.
    assert len(of(grok, ArgumentsAppended)) == 1


def test_recorded_stream_does_not_depend_on_chunking() -> None:
    data = (DIR / "parallel_tool_calls_two_functions.sse").read_bytes()
    assert read_all(OpenAIChatReader(), data, step=5) == read_stream(data)


def test_cut_recording_has_no_terminal_and_open_calls() -> None:
    data = (DIR / "parallel_tool_calls_two_functions.sse").read_bytes()
    events = read_stream(data[: data.index(b'"finish_reason":"tool_calls"')])
    assert of(events, TurnEnded) == [] and of(events, CallClosed) == []
    assert codes(events) == ["missing_terminal"]


# -- synthetic quirks -----------------------------------------------------------------------

def test_registry_and_empty_arguments_flag() -> None:
    assert isinstance(reader_for("openai-chat"), OpenAIChatReader)
    assert OpenAIChatReader.name == "openai-chat"
    assert OpenAIChatReader.empty_arguments_mean_empty_object is False


def test_sparse_indexes_are_fine() -> None:
    events = read_stream(chunk(tc(3, "call_a", "f", ""), tc(7, "call_b", "g", '{"b":2}'))
                         + chunk(tc(3, args='{"a":1}')) + chunk(finish="tool_calls") + DONE)
    assert identities(events) == [("choice0/call3", "call_a", "f"), ("choice0/call7", "call_b", "g")]
    assert text_of(events, "choice0/call3") == '{"a":1}'
    assert text_of(events, "choice0/call7") == '{"b":2}'
    assert codes(events) == []


def test_a_call_whose_first_fragment_has_no_name_is_reported() -> None:
    """Found by review: arguments for an index never announced passed without a word (the
    gate refuses the call: no tool is named None)."""
    events = read_stream(chunk(tc(3, args='{"a":1}')) + chunk(finish="tool_calls") + DONE)
    assert text_of(events, "choice0/call3") == '{"a":1}'
    assert codes(events) == ["call_without_name"]


def test_repeated_id_and_name_are_never_concatenated() -> None:
    events = read_stream(chunk(tc(0, "call_x", "read_file", '{"pa'))
                         + chunk(tc(0, "call_x", "read_file", 'th":'))
                         + chunk(tc(0, "call_x", "read_file", '"a"}'))
                         + chunk(finish="tool_calls") + DONE)
    assert identities(events) == [("choice0/call0", "call_x", "read_file")]
    assert text_of(events, "choice0/call0") == '{"path":"a"}'
    repeated = [e for e in of(events, Anomaly) if e.code == "repeated_identity"]
    assert [(e.frame, e.key) for e in repeated] == [(1, "choice0/call0")]
    assert codes(events) == ["repeated_identity"]


def test_index_reused_with_a_new_id_after_arguments_opens_a_new_call() -> None:
    events = read_stream(chunk(tc(0, "call_a", "f", '{"n":1}'))
                         + chunk(tc(0, "call_b", "f", '{"n":2}'))
                         + chunk(tc(0, "call_c", "g", "{"), tc(0, args='"n":3}'))
                         + chunk(finish="tool_calls") + DONE)
    assert identities(events) == [("choice0/call0", "call_a", "f"),
                                  ("choice0/call0#2", "call_b", "f"),
                                  ("choice0/call0#3", "call_c", "g")]
    assert [text_of(events, k) for k in ("choice0/call0", "choice0/call0#2", "choice0/call0#3")] \
        == ['{"n":1}', '{"n":2}', '{"n":3}']
    assert [(e.code, e.key) for e in of(events, Anomaly)] == \
        [("index_reused", "choice0/call0#2"), ("index_reused", "choice0/call0#3")]
    assert [e.key for e in of(events, CallClosed)] == \
        ["choice0/call0", "choice0/call0#2", "choice0/call0#3"]


def test_new_id_before_any_arguments_is_a_reannouncement() -> None:
    events = read_stream(chunk(tc(0, "call_a", "f", "")) + chunk(tc(0, "call_b", args="{}"))
                         + chunk(finish="tool_calls") + DONE)
    # Same key: the accumulator merges the announcements and reports the changed id.
    assert identities(events) == [("choice0/call0", "call_a", "f"), ("choice0/call0", "call_b", None)]
    assert codes(events) == []


def test_whole_call_in_one_chunk() -> None:
    events = read_stream(chunk(tc(0, "call_w", "weather", '{"location":"SF"}'))
                         + chunk(finish="tool_calls") + DONE)
    assert identities(events) == [("choice0/call0", "call_w", "weather")]
    assert [e.fragment for e in of(events, ArgumentsAppended)] == ['{"location":"SF"}']
    assert [e.signal for e in of(events, TurnEnded)] == ["[DONE]"]


def test_several_fragments_of_one_index_in_one_chunk_keep_their_order() -> None:
    events = read_stream(chunk(tc(0, "call_k", "search"), tc(0, args='{"q":'), tc(0, args='"x"}'))
                         + chunk(finish="tool_calls") + DONE)
    assert identities(events) == [("choice0/call0", "call_k", "search")]
    assert [e.fragment for e in of(events, ArgumentsAppended)] == ['{"q":', '"x"}']
    assert codes(events) == []


def test_azure_prompt_filter_chunk_is_quiet() -> None:
    azure = {"choices": [], "created": 0, "id": "", "model": "", "object": "",
             "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {}}]}
    events = read_stream(f"data: {json.dumps(azure)}\n\n".encode() + chunk(content="Hi")
                         + chunk(finish="stop") + DONE)
    assert codes(events) == []
    assert [e.text for e in of(events, TextAppended)] == ["Hi"]


def test_unexpected_object_is_reported() -> None:
    body = {"object": "chat.completion", "choices": []}
    assert codes(read_stream(f"data: {json.dumps(body)}\n\n".encode())) == \
        ["unexpected_object", "missing_terminal"]


@pytest.mark.parametrize("reason,cut,failed", [
    ("stop", False, False), ("tool_calls", False, False), ("function_call", False, False),
    ("length", True, False), ("content_filter", False, True)])
def test_finish_reason_table(reason: str, cut: bool, failed: bool) -> None:
    events = read_stream(chunk(tc(0, "call_a", "f", '{"a"')) + chunk(finish=reason) + DONE)
    assert [(s.reason, s.cut, s.failed) for s in of(events, StopReported)] == \
        [(reason, cut, failed)]
    assert [(e.frame, e.key) for e in of(events, CallClosed)] == [(1, "choice0/call0")]
    assert [e.signal for e in of(events, TurnEnded)] == ["[DONE]"]
    assert codes(events) == []


def test_unknown_finish_reason_is_reported_and_taken_as_failed() -> None:
    events = read_stream(chunk(finish="eos") + DONE)
    assert [(s.reason, s.cut, s.failed) for s in of(events, StopReported)] == [("eos", False, True)]
    assert codes(events) == ["unknown_finish_reason"]


def test_done_without_finish_reason_is_not_a_terminal() -> None:
    events = read_stream(chunk(tc(0, "call_a", "f", '{"a":1}')) + DONE)
    assert of(events, TurnEnded) == [] and of(events, CallClosed) == []
    assert codes(events) == ["done_without_finish_reason", "missing_terminal"]


def test_data_after_done_without_finish_is_reported() -> None:
    events = read_stream(DONE + chunk(content="late"))
    assert codes(events) == ["done_without_finish_reason", "data_after_done", "missing_terminal"]


def test_usage_chunk() -> None:
    usage = {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2}}
    events = read_stream(chunk(finish="stop") + f"data: {json.dumps(usage)}\n\n".encode() + DONE)
    assert [u.usage for u in of(events, UsageReported)] == [usage["usage"]]


def test_text_channels() -> None:
    events = read_stream(chunk(reasoning_content="hmm") + chunk(content="Hi", refusal=None)
                         + chunk(refusal="No.") + chunk(finish="stop") + DONE)
    assert [(e.channel, e.text) for e in of(events, TextAppended)] == \
        [("reasoning", "hmm"), ("text", "Hi"), ("refusal", "No.")]


def test_missing_index_falls_back_to_id() -> None:
    events = read_stream(chunk(tc(None, "call_a", "f", '{"a":')) + chunk(tc(None, "call_b", "g", "{"))
                         + chunk(tc(None, "call_a", args="1}")) + chunk(tc(None, "call_b", args="}"))
                         + chunk(finish="tool_calls") + DONE)
    assert identities(events) == [("choice0/id:call_a", "call_a", "f"),
                                  ("choice0/id:call_b", "call_b", "g")]
    assert text_of(events, "choice0/id:call_a") == '{"a":1}'
    assert text_of(events, "choice0/id:call_b") == "{}"
    assert [(e.code, e.key) for e in of(events, Anomaly)] == \
        [("missing_index", "choice0/id:call_a"), ("missing_index", "choice0/id:call_b")]


def test_missing_index_with_repeated_name_is_a_repeat() -> None:
    events = read_stream(chunk(tc(None, "call_a", "f", "{")) + chunk(tc(None, "call_a", "f", "}"))
                         + chunk(tc(None, "call_a", "f", " ")) + chunk(finish="tool_calls") + DONE)
    assert identities(events) == [("choice0/id:call_a", "call_a", "f")]
    assert codes(events) == ["missing_index", "repeated_identity"]


def test_missing_index_and_id_go_to_the_last_open_call() -> None:
    events = read_stream(chunk(tc(0, "call_z", "g", "{}"), tc(1, "call_a", "f", '{"a":'))
                         + chunk(tc(args="1")) + chunk(tc(args="}"))
                         + chunk(finish="tool_calls") + DONE)
    assert text_of(events, "choice0/call0") == "{}"
    assert text_of(events, "choice0/call1") == '{"a":1}'
    # missing_index once per call; with two calls open, each such fragment is a guess the gate
    # will not run (ambiguous_fragment)
    assert [(e.code, e.frame, e.key) for e in of(events, Anomaly)] == [
        ("ambiguous_fragment", 1, "choice0/call1"), ("missing_index", 1, "choice0/call1"),
        ("ambiguous_fragment", 2, "choice0/call1")]


def test_missing_index_and_id_with_one_call_open_is_no_guess() -> None:
    events = read_stream(chunk(tc(0, "call_a", "f", '{"a":')) + chunk(tc(args="1}"))
                         + chunk(finish="tool_calls") + DONE)
    assert text_of(events, "choice0/call0") == '{"a":1}'
    assert codes(events) == ["missing_index"]


def test_empty_object_then_more() -> None:
    events = read_stream(chunk(tc(0, "call_a", "f", "{}")) + chunk(tc(0, args='{"a":1}'))
                         + chunk(tc(0, args=" ")) + chunk(finish="tool_calls") + DONE)
    assert text_of(events, "choice0/call0") == '{}{"a":1} '
    assert [(e.code, e.frame) for e in of(events, Anomaly)] == [("empty_object_then_more", 1)]


def test_empty_object_alone_is_not_reported() -> None:
    events = read_stream(chunk(tc(0, "call_a", "f", "")) + chunk(tc(0, args="{}"))
                         + chunk(finish="tool_calls") + DONE)
    assert codes(events) == []


def test_error_payload_is_a_provider_error_not_a_terminal() -> None:
    error = {"error": {"message": "Overloaded", "type": "server_error", "code": "overloaded"}}
    events = read_stream(chunk(content="Hi") + f"data: {json.dumps(error)}\n\n".encode())
    assert [(e.message, e.code) for e in of(events, ProviderError)] == [("Overloaded", "overloaded")]
    assert of(events, TurnEnded) == []
    assert codes(events) == ["missing_terminal"]


def test_error_on_a_chunk_with_finish_reason_error() -> None:
    body = {"object": "chat.completion.chunk", "error": {"code": 502, "message": "Upstream"},
            "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}]}
    events = read_stream(chunk(tc(0, "call_a", "f", '{"a'))
                         + f"data: {json.dumps(body)}\n\n".encode() + DONE)
    assert [(e.message, e.code) for e in of(events, ProviderError)] == [("Upstream", "502")]
    assert [(s.reason, s.cut, s.failed) for s in of(events, StopReported)] == \
        [("error", False, True)]
    assert codes(events) == []


def test_choices_are_keyed_separately() -> None:
    events = read_stream(chunk(tc(0, "call_a", "f", "{}"), choice=0)
                         + chunk(tc(0, "call_b", "f", "[]"), choice=1)
                         + chunk(finish="tool_calls", choice=0) + DONE)
    assert [e.key for e in of(events, CallOpened)] == ["choice0/call0", "choice1/call0"]
    assert [e.key for e in of(events, CallClosed)] == ["choice0/call0"]
    assert codes(events) == ["choice_without_finish_reason"]
    assert [e.signal for e in of(events, TurnEnded)] == ["[DONE]"]


def test_arguments_sent_as_an_object_are_serialized() -> None:
    events = read_stream(chunk(tc(0, "call_a", "f", {"b": 1, "a": [True]}))
                         + chunk(finish="tool_calls") + DONE)
    assert [(e.key, e.text, e.origin) for e in of(events, ArgumentsSet)] == \
        [("choice0/call0", '{"b":1,"a":[true]}', "serialized")]
    assert codes(events) == ["arguments_not_text"]


def test_legacy_function_call_delta() -> None:
    events = read_stream(chunk(function_call={"name": "f", "arguments": ""})
                         + chunk(function_call={"arguments": '{"a":1}'})
                         + chunk(finish="function_call") + DONE)
    assert identities(events) == [("choice0/function_call", None, "f")]
    assert text_of(events, "choice0/function_call") == '{"a":1}'
    assert [e.key for e in of(events, CallClosed)] == ["choice0/function_call"]


def test_delta_after_finish_reason_is_reported() -> None:
    events = read_stream(chunk(finish="stop") + chunk(content="more") + DONE)
    assert codes(events) == ["delta_after_finish"]


def test_data_after_terminal_is_reported() -> None:
    events = read_stream(chunk(finish="stop") + DONE + chunk(content="late"))
    assert "data_after_terminal" in codes(events)
