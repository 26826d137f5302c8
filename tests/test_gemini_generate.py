"""The Gemini generateContent reader (PROTOCOLS.md §4b): recorded streams and synthetic edge cases."""

from __future__ import annotations

import json
import pathlib
from typing import Any

import orjson
import pytest
from callscope.core.events import (
    Anomaly,
    ArgumentPiece,
    ArgumentsSet,
    CallClosed,
    CallCut,
    CallEvent,
    CallOpened,
    ProviderError,
    StopReported,
    TextAppended,
    TurnEnded,
    UsageReported,
)
from callscope.core.providers import base, reader_for
from callscope.core.providers.gemini_generate import GeminiGenerateReader
from callscope.core.sse import decode_all
from hypothesis import given, settings
from hypothesis import strategies as st
from readers import FIXTURE_ROOT, codes, of, read_all

FIXTURES = FIXTURE_ROOT / "gemini-generatecontent"


def run(data: bytes) -> list[CallEvent]:
    return read_all(GeminiGenerateReader(), data)


def fixture(name: str) -> list[CallEvent]:
    return run((FIXTURES / name).read_bytes())


def sse(*payloads: Any) -> bytes:
    """Gemini framing: data-only, CRLF CRLF."""
    return b"".join(b"data: " + orjson.dumps(p) + b"\r\n\r\n" for p in payloads)


def chunk(*parts: Any, finish: str | None = None, index: int | None = None,
          usage: dict[str, Any] | None = None) -> dict[str, Any]:
    cand: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}}
    if finish is not None:
        cand["finishReason"] = finish
    if index is not None:
        cand["index"] = index
    out: dict[str, Any] = {"candidates": [cand]}
    if usage is not None:
        out["usageMetadata"] = usage
    return out


def fc(**call: Any) -> dict[str, Any]:
    return {"functionCall": call}


def piece(path: str, **value: Any) -> dict[str, Any]:
    return {"jsonPath": path, **value}


def streamed(*pieces: Any, more: bool = True) -> dict[str, Any]:
    return fc(partialArgs=list(pieces), **({"willContinue": True} if more else {}))


def calls(events: list[CallEvent]) -> dict[str, dict[str, Any]]:
    """Per key: name, id, final argument text and origin, whether closed, frame of the close."""
    out: dict[str, dict[str, Any]] = {}
    for e in events:
        if isinstance(e, CallOpened):
            out[e.key] = {"name": e.name, "id": e.id, "text": None, "origin": None,
                          "closed": None}
        elif isinstance(e, ArgumentsSet):
            out[e.key].update(text=e.text, origin=e.origin)
        elif isinstance(e, CallClosed | CallCut):
            out[e.key]["closed"] = e.frame
    return out


# -- recorded streams ------------------------------------------------------------------------


def test_gemini_api_complete_call_in_one_chunk() -> None:
    events = fixture("gemini_api_complete_functionCall_one_chunk.reconstructed.sse")
    assert calls(events) == {"call:0": {"name": "weather", "id": None, "origin": "serialized",
                                        "text": '{"location":"San Francisco"}', "closed": 0}}
    assert of(events, StopReported) == [StopReported(1, "STOP", cut=False, failed=False)]
    assert of(events, TurnEnded) == [TurnEnded(1, "finishReason STOP")]
    assert codes(events) == []
    # The same usage repeats on the finish chunk: reported once.
    assert [u.usage["totalTokenCount"] for u in of(events, UsageReported)] == [89]
    assert of(events, TextAppended) == []  # the finish chunk's text part is ""


def test_vertex_streamed_arguments_two_sequential_calls() -> None:
    events = fixture("vertex_streamFunctionCallArguments_partialArgs.reconstructed.sse")
    assert calls(events) == {
        "call:0": {"name": "getWeather", "id": None, "text": '{"location":"Boston"}',
                   "origin": "assembled", "closed": 3},
        "call:1": {"name": "getWeather", "id": None, "text": '{"location":"San Francisco"}',
                   "origin": "assembled", "closed": 7},
    }
    assert [(p.frame, p.key, p.path, p.value, p.will_continue)
            for p in of(events, ArgumentPiece)] == [
        (1, "call:0", "$.location", "Boston", True), (2, "call:0", "$.location", "", False),
        (5, "call:1", "$.location", "San Francisco", True),
        (6, "call:1", "$.location", "", False),
    ]
    # The last chunk carries both the {} terminator and finishReason: the call closes first.
    kinds = [type(e).__name__ for e in events if e.frame == 7]
    assert kinds.index("CallClosed") < kinds.index("StopReported") < kinds.index("TurnEnded")
    assert of(events, StopReported) == [StopReported(7, "STOP", cut=False, failed=False)]
    assert codes(events) == []


def test_vertex_missing_terminator_closes_at_finish_reason() -> None:
    events = fixture("vertex_partialArgs_missing_terminal_functionCall.reconstructed.sse")
    assert calls(events) == {"call:0": {
        "name": "writeItems", "id": None, "origin": "assembled", "closed": 15,
        "text": '{"operations":[{"action":"add","description":"Fresh red apple",'
                '"itemid":"apple_001","price":0.5},{"action":"add",'
                '"description":"Ripe yellow banana","itemid":"banana_001","price":0.3}]}'}}
    assert len(of(events, ArgumentPiece)) == 14
    assert [(a.code, a.key, a.frame) for a in of(events, Anomaly)] == [
        ("missing_call_terminator", "call:0", 15)]
    assert of(events, TurnEnded) == [TurnEnded(15, "finishReason STOP")]


def test_vertex_no_args_call_and_parallel_streamed_calls() -> None:
    events = fixture("vertex_partialArgs_parallel_calls_and_no_args_call.reconstructed.sse")
    assert {k: (c["name"], c["text"], c["origin"], c["closed"])
            for k, c in calls(events).items()} == {
        "call:0": ("read_theme", "{}", "serialized", 1),
        "call:1": ("read_screen", '{"id":"A"}', "assembled", 5),
        "call:2": ("read_screen", '{"id":"B"}', "assembled", 9),
        "call:3": ("read_screen", '{"id":"C"}', "assembled", 13),
    }
    texts = of(events, TextAppended)
    assert [t.channel for t in texts] == ["reasoning"]
    assert texts[0].text.startswith("**Processing User Requests**\n\nI've started")
    assert of(events, TurnEnded) == [TurnEnded(14, "finishReason STOP")]
    assert codes(events) == []


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.sse")), ids=lambda p: p.name)
def test_every_recording_ends_its_turn_cleanly(path: pathlib.Path) -> None:
    events = run(path.read_bytes())
    assert len(of(events, TurnEnded)) == 1
    assert isinstance(events[-1], TurnEnded)
    assert of(events, ProviderError) == []
    assert all(c["closed"] is not None for c in calls(events).values())


def test_registry_builds_this_reader() -> None:
    reader = reader_for("gemini-generate")
    assert isinstance(reader, GeminiGenerateReader)
    assert reader.empty_arguments_mean_empty_object is True


# -- complete calls ----------------------------------------------------------------------------


def test_several_calls_in_one_chunk_and_across_chunks() -> None:
    events = run(sse(
        chunk({"text": "Checking "}, fc(name="a", args={"x": 1}),
              fc(name="b", args={"y": [1, 2]}, id="call-7")),
        chunk({"text": "both."}, fc(name="c", args={"z": {"q": None}})),
        chunk({"text": ""}, finish="STOP"),
    ))
    assert calls(events) == {
        "call:0": {"name": "a", "id": None, "text": '{"x":1}', "origin": "serialized",
                   "closed": 0},
        "call:1": {"name": "b", "id": "call-7", "text": '{"y":[1,2]}', "origin": "serialized",
                   "closed": 0},
        "call:2": {"name": "c", "id": None, "text": '{"z":{"q":null}}', "origin": "serialized",
                   "closed": 1},
    }
    assert [t.text for t in of(events, TextAppended)] == ["Checking ", "both."]
    assert of(events, TurnEnded) == [TurnEnded(2, "finishReason STOP")]
    assert codes(events) == []


def test_serialized_args_keep_key_order_and_unicode() -> None:
    events = run(sse(chunk(fc(name="f", args={"b": "é", "a": 2}), finish="STOP")))
    assert calls(events)["call:0"]["text"] == '{"b":"é","a":2}'


def test_no_argument_calls_are_the_empty_object() -> None:
    events = run(sse(chunk(fc(name="f"), fc(name="g", args=None), fc(name="h", args=[1]),
                           finish="STOP")))
    assert [(c["text"], c["closed"]) for c in calls(events).values()] == [
        ("{}", 0), ("{}", 0), ("[1]", 0)]
    assert codes(events) == ["args_not_object"]


def test_parts_of_the_finish_chunk_come_before_the_stop() -> None:
    events = run(sse(chunk(fc(name="f", args={}), finish="STOP")))
    assert [type(e).__name__ for e in events] == [
        "CallOpened", "ArgumentsSet", "CallClosed", "StopReported", "TurnEnded"]


def test_second_candidate_keeps_its_index_in_the_key() -> None:
    events = run(sse(
        {"candidates": [{"index": 0, "content": {"parts": [fc(name="a", args={})]}},
                        {"index": 1, "content": {"parts": [fc(name="b", args={"k": 1})]}}]},
        {"candidates": [{"index": 0, "finishReason": "STOP"}]},
        {"candidates": [{"index": 1, "content": {"parts": [fc(name="c")]},
                         "finishReason": "STOP"}]},
    ))
    assert {k: c["name"] for k, c in calls(events).items()} == {
        "call:0": "a", "cand1/call:0": "b", "cand1/call:1": "c"}
    # The turn ends only when every candidate seen has finished.
    assert of(events, TurnEnded) == [TurnEnded(2, "finishReason STOP")]
    assert codes(events) == []


# -- finish reasons, blocks, errors ----------------------------------------------------------


def test_max_tokens_is_cut() -> None:
    events = run(sse(chunk({"text": "Long answ"}, finish="MAX_TOKENS")))
    assert of(events, StopReported) == [StopReported(0, "MAX_TOKENS", cut=True, failed=False)]
    assert of(events, TurnEnded) == [TurnEnded(0, "finishReason MAX_TOKENS")]


def test_malformed_function_call_final_chunk_without_content() -> None:
    events = run(sse(chunk({"text": "Let me call"}),
                     {"candidates": [{"finishReason": "MALFORMED_FUNCTION_CALL"}]}))
    assert calls(events) == {}
    assert of(events, StopReported) == [
        StopReported(1, "MALFORMED_FUNCTION_CALL", cut=False, failed=True)]
    assert of(events, TurnEnded) == [TurnEnded(1, "finishReason MALFORMED_FUNCTION_CALL")]
    assert codes(events) == []


@pytest.mark.parametrize("reason", ["SAFETY", "RECITATION", "PROHIBITED_CONTENT", "SPII",
                                    "BLOCKLIST", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS",
                                    "MISSING_THOUGHT_SIGNATURE", "MALFORMED_RESPONSE", "OTHER"])
def test_failure_reasons(reason: str) -> None:
    events = run(sse({"candidates": [{"finishReason": reason}]}))
    assert of(events, StopReported) == [StopReported(0, reason, cut=False, failed=True)]
    assert codes(events) == []


def test_unknown_reason_fails_with_an_anomaly() -> None:
    events = run(sse({"candidates": [{"finishReason": "BRAND_NEW"}]}))
    assert of(events, StopReported) == [StopReported(0, "BRAND_NEW", cut=False, failed=True)]
    assert codes(events) == ["unknown_finish_reason"]
    assert of(events, TurnEnded) == [TurnEnded(0, "finishReason BRAND_NEW")]


def test_prompt_blocked() -> None:
    events = run(sse({"promptFeedback": {"blockReason": "SAFETY"},
                      "usageMetadata": {"promptTokenCount": 8, "totalTokenCount": 8}}))
    assert of(events, ProviderError) == [ProviderError(0, "prompt blocked: SAFETY", "SAFETY")]
    assert of(events, StopReported) == [StopReported(0, "SAFETY", cut=False, failed=True)]
    assert of(events, TurnEnded) == [TurnEnded(0, "promptFeedback.blockReason SAFETY")]
    assert [u.usage for u in of(events, UsageReported)] == [
        {"promptTokenCount": 8, "totalTokenCount": 8}]


def test_error_payload_is_a_provider_error_not_a_terminal() -> None:
    events = run(sse(chunk({"text": "Hi"}),
                     {"error": {"code": 429, "message": "Resource exhausted",
                                "status": "RESOURCE_EXHAUSTED"}}))
    assert of(events, ProviderError) == [
        ProviderError(1, "Resource exhausted", "429 RESOURCE_EXHAUSTED")]
    assert of(events, TurnEnded) == []
    assert codes(events) == ["missing_terminal"]


def test_usage_later_wins() -> None:
    events = run(sse(chunk({"text": "a"}, usage={"trafficType": "ON_DEMAND"}),
                     chunk({"text": "b"}, usage={"trafficType": "ON_DEMAND"}),
                     chunk(finish="STOP", usage={"totalTokenCount": 12})))
    assert [(u.frame, u.usage) for u in of(events, UsageReported)] == [
        (0, {"trafficType": "ON_DEMAND"}), (2, {"totalTokenCount": 12})]


def test_data_after_finish_done_and_junk_are_reported() -> None:
    data = sse(chunk(finish="STOP"), chunk({"text": "late"}), [1, 2])
    data += b"data: [DONE]\r\n\r\ndata: {nope\r\n\r\n"
    events = run(data)
    assert codes(events) == ["data_after_terminal", "data_after_terminal", "not_an_object",
                             "unexpected_done", "not_json"]
    assert [t.text for t in of(events, TextAppended)] == ["late"]  # still shown


def test_unhandled_parts_are_reported_and_bare_signatures_are_not() -> None:
    events = run(sse(chunk({"thoughtSignature": "abc"},
                           {"executableCode": {"code": "print(1)"}}, finish="STOP")))
    assert [(a.code, a.message) for a in of(events, Anomaly)] == [
        ("unhandled_part", "part ['executableCode'] is not shown")]


# -- Vertex partialArgs ------------------------------------------------------------------------


def test_nested_arrays_and_scalar_values() -> None:
    events = run(sse(
        chunk(fc(name="plan", willContinue=True)),
        chunk(streamed(piece("$.steps[0].title", stringValue="Wash", willContinue=True))),
        chunk(streamed(piece("$.steps[0].title", stringValue=" up", willContinue=True),
                       piece("$.steps[0].title", stringValue=""))),
        chunk(streamed(piece("$.steps[0].minutes", numberValue=5),
                       piece("$.steps[1].done", boolValue=False),
                       piece("$.grid[0][0]", numberValue=1.5),
                       piece("$.grid[0][1]", nullValue=None),
                       piece("$.grid[1][0]", boolValue=True))),
        chunk(streamed(piece('$["weird key"]', stringValue="a.b"),
                       piece("$['it\\'s']", stringValue='say "hi"'),
                       piece("$.note", nullValue="NULL_VALUE"))),
        chunk(fc(), finish="STOP"),
    ))
    assert calls(events)["call:0"]["text"] == (
        '{"steps":[{"title":"Wash up","minutes":5},{"done":false}],'
        '"grid":[[1.5,null],[true]],"weird key":"a.b","it\'s":"say \\"hi\\"","note":null}')
    assert calls(events)["call:0"]["closed"] == 5
    values = [(p.path, p.value, p.will_continue) for p in of(events, ArgumentPiece)]
    assert values[3:5] == [("$.steps[0].minutes", 5, False), ("$.steps[1].done", False, False)]
    assert ("$.note", None, False) in values
    assert codes(events) == []


def test_stream_cut_mid_partial_args_leaves_the_call_open_with_visible_text() -> None:
    events = run(sse(
        chunk(fc(name="write", willContinue=True)),
        chunk(streamed(piece("$.path", stringValue="a.txt"))),
        chunk(streamed(piece("$.body", stringValue="Hello wor", willContinue=True))),
    ))
    opened = of(events, CallOpened)
    assert [(o.key, o.name) for o in opened] == [("call:0", "write")]
    assert of(events, CallClosed) == []
    assert of(events, ArgumentsSet) == [
        ArgumentsSet(None, "call:0", '{"path":"a.txt","body":"Hello wor"}', "assembled")]
    assert of(events, TurnEnded) == []
    assert codes(events) == ["missing_terminal"]


def test_pieces_without_an_open_call_open_an_anonymous_one() -> None:
    events = run(sse(chunk(streamed(piece("$.q", stringValue="x"))),
                     chunk(fc(), finish="STOP")))
    assert calls(events) == {"call:0": {"name": None, "id": None, "text": '{"q":"x"}',
                                        "origin": "assembled", "closed": 1}}
    assert codes(events) == ["piece_for_unknown_call"]


def test_a_new_name_closes_the_open_streamed_call() -> None:
    events = run(sse(
        chunk(fc(name="a", willContinue=True), streamed(piece("$.n", numberValue=1))),
        chunk(fc(name="b", args={"m": 2}), finish="STOP"),
    ))
    assert {k: (c["text"], c["origin"], c["closed"]) for k, c in calls(events).items()} == {
        "call:0": ('{"n":1}', "assembled", 1), "call:1": ('{"m":2}', "serialized", 1)}
    # Its last part said willContinue: the call was cut (the gate refuses it).
    assert codes(events) == ["missing_call_terminator", "call_not_ended"]
    assert of(events, CallCut)[0].why == of(events, Anomaly)[1].message


def test_empty_function_call_with_nothing_open() -> None:
    events = run(sse(chunk(fc(), finish="STOP")))
    assert calls(events) == {}
    assert codes(events) == ["terminator_without_call"]


@pytest.mark.parametrize("path", ["$.a[*]", "$..a", "a.b", "$[0]", "$.a[-1]", "$.list[2]",
                                  "$", "$['open", "$.a['x'"])
def test_unplaceable_paths_are_reported_and_leave_nothing_behind(path: str) -> None:
    events = run(sse(chunk(fc(name="f", willContinue=True),
                           streamed(piece(path, stringValue="v")), fc(), finish="STOP")))
    assert [p.path for p in of(events, ArgumentPiece)] == [path]  # the piece is still shown
    assert codes(events) == ["bad_json_path"]
    assert calls(events)["call:0"]["text"] == "{}"


def test_type_conflicts_and_replacements() -> None:
    events = run(sse(chunk(
        fc(name="f", willContinue=True),
        streamed(piece("$.a", stringValue="x"), piece("$.a.b", stringValue="y"),
                 piece("$.n", numberValue=1), piece("$.n", numberValue=2),
                 piece("$.s", stringValue="p"), piece("$.s", stringValue="q")),
        fc(), finish="STOP")))
    assert codes(events) == ["bad_json_path", "value_replaced", "string_reopened"]
    assert calls(events)["call:0"]["text"] == '{"a":"x","n":2,"s":"pq"}'


def test_malformed_pieces_are_reported() -> None:
    events = run(sse(chunk(
        fc(name="f", willContinue=True),
        streamed({"jsonPath": "$.a"}, {"stringValue": "no path"}, "junk",
                 piece("$.b", numberValue="NaN"),
                 piece("$.c", stringValue="s", boolValue=True)),
        fc(), finish="STOP")))
    assert codes(events) == ["bad_piece", "bad_piece", "bad_piece", "bad_piece_value",
                             "ambiguous_piece"]
    assert calls(events)["call:0"]["text"] == '{"b":"NaN","c":"s"}'


def test_assembly_serializes_once_per_call(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []
    real = base.dumps_compact

    def counting(value: Any) -> str:
        seen.append(value)
        text: str = real(value)
        return text

    monkeypatch.setattr(base, "dumps_compact", counting)
    frags = [chunk(streamed(piece("$.body", stringValue="ab", willContinue=True)))
             for _ in range(2000)]
    events = run(sse(chunk(fc(name="f", willContinue=True)), *frags, chunk(fc(), finish="STOP")))
    assert len(seen) == 1
    assert calls(events)["call:0"]["text"] == '{"body":"' + "ab" * 2000 + '"}'
    assert len(of(events, ArgumentPiece)) == 2000


# -- a whole call's text cut from the frame's text -------------------------------------------

_TEXT = st.characters(blacklist_categories=("Cs",))  # (a lone surrogate is no JSON text's)
_ARGS = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(_TEXT),
    lambda children: (st.lists(children, max_size=4)
                      | st.dictionaries(st.text(_TEXT, max_size=8), children, max_size=4)),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(_ARGS, st.sampled_from(["compact", "spaced", "ascii", "twice", "decoy"]), st.booleans())
def test_a_whole_call_text_is_its_serialization_however_the_payload_is_written(
        args: Any, style: str, cut_always: bool) -> None:
    """The text cut from the frame (:meth:`GeminiGenerateReader._whole`) is the serialization
    the reader wrote before (``dumps_compact(plain(args))``), whatever the payload's spelling:
    compact, spaced, escaped to ASCII, the key twice, or ``"args":`` first inside a string."""
    from callscope.core.providers import gemini_generate

    fc = {"name": "f", "args": args}
    if style == "compact":
        data = orjson.dumps({"candidates": [{"content": {"parts": [{"functionCall": fc}]}}]})
    elif style == "decoy":
        data = orjson.dumps({"x": '"args":' + json.dumps(args, ensure_ascii=False),
                             "candidates": [{"content": {"parts": [{"functionCall": fc}]}}]})
    else:
        body = json.dumps({"candidates": [{"content": {"parts": [{"functionCall": fc}]}}]},
                          ensure_ascii=style == "ascii",
                          separators=(", ", ": ") if style == "spaced" else (",", ":"))
        if style == "twice":
            body = body.replace('"args":', '"args":{"old":1},"args":', 1)
        data = body.encode()
    wire = b"data: " + data + b"\n\n"
    frame = decode_all(wire)[0]
    payload = orjson.loads(frame.data)
    parsed = payload["candidates"][0]["content"]["parts"][0]["functionCall"]["args"]
    reader = GeminiGenerateReader()
    old = gemini_generate._CUT_FROM
    gemini_generate._CUT_FROM = 0 if cut_always else old
    try:
        text, value = reader._whole(frame, "call:0", parsed)
    finally:
        gemini_generate._CUT_FROM = old
    assert text == base.dumps_compact(gemini_generate.plain(parsed))
    assert type(text) is str
    # The value handed with it (ArgumentsSet.parsed) is the text's parse, exactly, and the text
    # its own serialization: what the draft checker and the gate take it for.
    assert value is (parsed if type(parsed) in (dict, list) else None)
    if value is not None:
        assert orjson.loads(text) == value and orjson.dumps(value) == text.encode()
