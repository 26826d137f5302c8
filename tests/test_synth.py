"""The synthesizer: every encoder's bytes, read back by the engine, give exactly the turn that was
described (calls, arguments, text, stop), whatever the fragmenting and the network chunking."""

from __future__ import annotations

import json
import random

import orjson
import pytest
from callscope.core.engine import Engine
from callscope.core.replay import Chunking, replay
from callscope.core.sse import decode_all
from callscope.core.synth import (
    COARSE,
    NO_ARGUMENTS,
    PROTOCOLS,
    Cut,
    Fragmenting,
    Stop,
    Text,
    ToolCall,
    Turn,
    encode,
    encode_turn,
    network_chunks,
    realistic_arguments,
    synthesize,
)
from callscope.core.tools import ToolSet
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# (protocol, stop kind, has calls) -> (stop reason, terminal signal); None: no terminal at all.
EXPECTED_STOP = {
    ("openai-responses", "normal"): (("completed", "completed"), "response.completed"),
    ("openai-responses", "length"): (("max_output_tokens",) * 2, "response.incomplete"),
    ("openai-responses", "error"): (("failed",) * 2, "response.failed"),
    ("openai-chat", "normal"): (("tool_calls", "stop"), "[DONE]"),
    ("openai-chat", "length"): (("length",) * 2, "[DONE]"),
    ("anthropic", "normal"): (("tool_use", "end_turn"), "message_stop"),
    ("anthropic", "length"): (("max_tokens",) * 2, "message_stop"),
    ("gemini-interactions", "normal"): (("requires_action", "completed"), "interaction.completed"),
    ("gemini-interactions", "length"): (("incomplete",) * 2, "interaction.completed"),
    ("gemini-generate", "normal"): (("STOP",) * 2, "finishReason STOP"),
    ("gemini-generate", "length"): (("MAX_TOKENS",) * 2, "finishReason MAX_TOKENS"),
    ("bedrock-converse", "normal"): (("tool_use", "end_turn"), "messageStop"),
    ("bedrock-converse", "length"): (("max_tokens",) * 2, "messageStop"),
    ("bedrock-invoke", "normal"): (("tool_use", "end_turn"), "message_stop"),
    ("bedrock-invoke", "length"): (("max_tokens",) * 2, "message_stop"),
    ("ollama-chat", "normal"): (("stop",) * 2, "done"),
    ("ollama-chat", "length"): (("length",) * 2, "done"),
}
WHOLE_CALLS = frozenset({"gemini-generate", "ollama-chat"})
"""Protocols whose calls come whole, arguments an object: only finished calls with object
arguments are sent, and the reader re-serializes them."""


def run(protocol: str, chunks: list[tuple[float, bytes]], chunking: str = "recorded",
        tools: ToolSet | None = None) -> Engine:
    engine = Engine(protocol, tools)
    for _ in replay(chunks, chunking=Chunking.parse(chunking), engine=engine):
        pass
    return engine


def json_object(text: str) -> dict | None:
    """Independent of the encoder (stdlib json): is the text a JSON object?"""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def expected_calls(protocol: str, turn: Turn) -> list[tuple[str, str]]:
    calls = [item for item in turn.items if isinstance(item, ToolCall)]
    if protocol in WHOLE_CALLS:  # whole objects: only finished calls with object args
        return [(c.name, c.arguments) for c in calls if c.closed and json_object(c.arguments or "{}")
                is not None]
    if protocol == "openai-responses" and turn.stop.kind == "error":
        # the error ends the stream while the unclosed call streams: later items never come
        cut = next((i for i, c in enumerate(calls) if not c.closed), len(calls))
        calls = calls[:cut + 1]
    return [(c.name, c.arguments) for c in calls]


def check_round_trip(protocol: str, turn: Turn, engine: Engine) -> None:
    state = engine.state
    got = [(c.name, c.text) for c in state.calls.values()]
    want = expected_calls(protocol, turn)
    if protocol in WHOLE_CALLS:  # the reader re-serializes the objects it receives
        assert [(n, orjson.loads(t)) for n, t in got] == \
               [(n, json.loads(a) if a else {}) for n, a in want]
    else:
        assert got == want
    texts = {ch: "".join(x.text for x in turn.items if isinstance(x, Text) and x.channel == ch)
             for ch in ("text", "reasoning")}
    assert {ch: "".join(state.text.get(ch, [])) for ch in texts} == texts
    kind = turn.stop.kind
    has_calls = any(isinstance(x, ToolCall) for x in turn.items)
    malformed = protocol == "gemini-generate" and kind == "normal" and any(
        isinstance(x, ToolCall) and x.closed and json_object(x.arguments or "{}") is None
        for x in turn.items)
    if malformed:
        assert state.stop is not None and state.stop.reason == "MALFORMED_FUNCTION_CALL"
        assert state.stop.failed and state.complete
    elif (protocol, kind) in EXPECTED_STOP:
        reasons, signal = EXPECTED_STOP[(protocol, kind)]
        assert state.stop is not None and state.stop.reason == reasons[0 if has_calls else 1]
        assert state.stop.cut == (kind == "length")
        assert state.terminal is not None and state.terminal.signal == signal
    else:  # an error event that no terminal signal follows
        assert state.terminal is None and state.stop is None
    if kind == "error":
        assert len(state.errors) >= 1
    if kind == "normal" and all(getattr(x, "closed", True) for x in turn.items):
        # a well-formed turn reads without a single anomaly, in every protocol
        assert [a.code for a in state.anomalies] == []
        assert all(call.closed for call in state.calls.values())


TURN = Turn((
    Text("Let me check — ça va? 日本語 🚀", "reasoning"),
    Text("Looking up the objective: «naïve» 数据 ✅"),
    ToolCall("lookup_demo_value", '{"key": "Objective", "note": "a \\"quoted\\" \\\\ path\\n"}'),
    ToolCall("add_demo_numbers", '{"a": 19.5, "b": -3e2}'),
    ToolCall("list_demo_keys", "{}"),
))


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("seed", range(6))
def test_round_trip_under_random_network_chunkings(protocol: str, seed: int) -> None:
    stream = synthesize(protocol, TURN, random.Random(seed), inside_chars=0.5)
    assert stream.end == "clean"
    assert b"".join(c for _, c in stream.chunks) == stream.data
    check_round_trip(protocol, TURN, run(protocol, stream.chunks))
    for chunking in ("whole", "bytes:1", f"random:{seed}"):
        check_round_trip(protocol, TURN, run(protocol, stream.chunks, chunking))


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("kind", ["normal", "length", "error"])
def test_every_stop_kind(protocol: str, kind: str) -> None:
    last_closed = kind == "normal"
    turn = Turn((Text("Working on it."), ToolCall("lookup_demo_value", '{"key":"Owner"}'),
                 ToolCall("delete_demo_file", '{"path":"notes/to', closed=last_closed)
                 if not last_closed else ToolCall("delete_demo_file", '{"path":"a","dry_run":true}')),
                Stop(kind, message="boom: the upstream went away" if kind == "error" else None))
    engine = run(protocol, synthesize(protocol, turn, random.Random(7)).chunks)
    check_round_trip(protocol, turn, engine)
    if kind == "error":
        assert "boom: the upstream went away" in [e.message for e in engine.state.errors]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_tool_without_arguments(protocol: str) -> None:
    turn = Turn((ToolCall("list_demo_keys", NO_ARGUMENTS[protocol]),))
    tools = ToolSet([{"name": "list_demo_keys", "parameters": {"type": "object", "properties": {},
                                                               "additionalProperties": False}}])
    engine = run(protocol, [(0.0, encode(protocol, turn, random.Random(1)))], tools=tools)
    decisions = list(engine.pipeline.decisions.values())
    assert [d.action for d in decisions] == ["execute"]
    assert decisions[0].arguments == {}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_invalid_json_arguments_pass_through_verbatim(protocol: str) -> None:
    bad = '{"key": "the "Objective" entry"}'
    turn = Turn((ToolCall("lookup_demo_value", bad),))
    engine = run(protocol, synthesize(protocol, turn, random.Random(3)).chunks)
    check_round_trip(protocol, turn, engine)
    refused = [d.reason for d in engine.pipeline.decisions.values()]
    assert refused == ([] if protocol in WHOLE_CALLS else ["invalid_json"])


@pytest.mark.parametrize("protocol", [p for p in PROTOCOLS if p not in WHOLE_CALLS])
def test_a_cut_keeps_exactly_the_fragments_before_it(protocol: str) -> None:
    arguments = '{"path":"notes/todo.txt","dry_run":true}'
    for at in range(1, len(arguments), 3):
        for seed in range(3):
            turn = Turn((ToolCall("lookup_demo_value", '{"key":"Objective"}'),
                         ToolCall("delete_demo_file", arguments)), cut=Cut(1, at))
            stream = synthesize(protocol, turn, random.Random(seed))
            assert stream.end == "reset"
            engine = run(protocol, stream.chunks)
            calls = list(engine.state.calls.values())
            assert [c.text for c in calls] == ['{"key":"Objective"}', arguments[:at]]
            assert engine.state.terminal is None
            assert {(d.action, d.reason) for d in engine.pipeline.decisions.values()} == \
                   {("refuse", "truncated")}


def test_gemini_generate_cut_falls_inside_the_whole_call_frame() -> None:
    turn = Turn((ToolCall("lookup_demo_value", '{"key":"Objective"}'),
                 ToolCall("delete_demo_file", '{"path":"x","dry_run":true}')), cut=Cut(1, 5))
    data = encode("gemini-generate", turn, random.Random(0))
    assert not data.endswith(b"\r\n") and data.rindex(b"data: ") > data.index(b"lookup_demo_value")
    engine = run("gemini-generate", [(0.0, data)])
    assert [c.name for c in engine.state.calls.values()] == ["lookup_demo_value"]
    with pytest.raises(ValueError):  # a call never sent has no frame to cut in
        encode("gemini-generate", Turn((ToolCall("x", "{", closed=False),), cut=Cut(0, 1)),
               random.Random(0))


# -- wire shapes (PROTOCOLS.md) -----------------------------------------------------------------

def payloads(protocol: str, turn: Turn = TURN) -> list[tuple[str | None, str]]:
    data = encode(protocol, turn, random.Random(11))
    return [(f.event, f.data) for f in decode_all(data) if f.dispatch]


def test_openai_responses_shapes() -> None:
    frames = payloads("openai-responses")
    events = [orjson.loads(d) for _, d in frames]
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert all(name == e["type"] for (name, _), e in zip(frames, events, strict=True))
    assert events[-1]["type"] == "response.completed"
    deltas = [e for e in events if e["type"].endswith(".delta")]
    assert deltas and all(len(e["delta"]) + len(e["obfuscation"]) == 16 for e in deltas
                          if len(e["delta"]) < 16)
    added = [e["item"] for e in events if e["type"] == "response.output_item.added"
             and e["item"]["type"] == "function_call"]
    assert all(i["id"].startswith("fc_") and i["call_id"].startswith("call_") and
               i["arguments"] == "" for i in added)
    args = [e for e in events if e["type"] == "response.function_call_arguments.delta"]
    assert {e["item_id"] for e in args} == {i["id"] for i in added}
    assert all("name" not in e for e in events if e["type"].endswith("arguments.done"))
    failed = [orjson.loads(d) for _, d in payloads("openai-responses", Turn(TURN.items, Stop("error")))]
    assert [e["type"] for e in failed[-2:]] == ["error", "response.failed"]
    assert set(failed[-2]["error"]) == {"type", "code", "message", "param"}  # nested, as on the wire


def test_openai_chat_shapes() -> None:
    frames = payloads("openai-chat")
    assert all(name is None for name, _ in frames)
    assert frames[-1][1] == "[DONE]"
    chunks = [orjson.loads(d) for _, d in frames[:-1]]
    assert chunks[-1]["choices"] == [] and "usage" in chunks[-1]
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    fragments = [tc for c in chunks for ch in c["choices"] for tc in ch["delta"].get("tool_calls", [])]
    firsts = [tc for tc in fragments if "id" in tc]
    assert [tc["index"] for tc in firsts] == [0, 1, 2]
    assert all(tc["function"]["arguments"] == "" for tc in firsts)
    assert all(set(tc) == {"index", "function"} for tc in fragments if "id" not in tc)
    errored = payloads("openai-chat", Turn(TURN.items, Stop("error")))
    assert "error" in orjson.loads(errored[-1][1]) and "[DONE]" not in [d for _, d in errored]


def test_anthropic_shapes() -> None:
    frames = payloads("anthropic")
    events = [orjson.loads(d) for _, d in frames]
    assert all(name == e["type"] for (name, _), e in zip(frames, events, strict=True))
    assert events[0]["type"] == "message_start" and events[-1]["type"] == "message_stop"
    assert "ping" in [e["type"] for e in events]
    starts = [e for e in events if e["type"] == "content_block_start"
              and e["content_block"]["type"] == "tool_use"]
    assert all(e["content_block"]["input"] == {} and e["content_block"]["id"].startswith("toolu_")
               for e in starts)
    for s in starts:  # every tool block opens with an empty partial_json
        first = next(e for e in events if e["type"] == "content_block_delta" and e["index"] == s["index"])
        assert first["delta"] == {"type": "input_json_delta", "partial_json": ""}
    cut = Turn((ToolCall("x", '{"a":', closed=False),), Stop("length"))
    events = [orjson.loads(d) for _, d in payloads("anthropic", cut)]
    assert "content_block_stop" not in [e["type"] for e in events]  # as the max_tokens recording
    assert events[-2]["delta"]["stop_reason"] == "max_tokens"


def test_gemini_interactions_shapes() -> None:
    frames = payloads("gemini-interactions")
    assert frames[-1] == ("done", "[DONE]")
    events = [orjson.loads(d) for _, d in frames[:-1]]
    assert all(name == e["event_type"] for (name, _), e in zip(frames, events, strict=False))
    calls = [e for e in events if e["event_type"] == "step.start" and e["step"]["type"] == "function_call"]
    assert all(e["step"]["arguments"] == {} for e in calls)
    deltas = [e["delta"] for e in events if e["event_type"] == "step.delta"
              and e["delta"]["type"] == "arguments_delta"]
    assert deltas and all(isinstance(d["arguments"], str) for d in deltas)
    assert events[-1]["interaction"]["status"] == "requires_action"


def test_gemini_generate_shapes() -> None:
    data = encode("gemini-generate", TURN, random.Random(2))
    assert data.endswith(b"\r\n\r\n") and b"\n\n" not in data.replace(b"\r\n", b"")
    assert data.count(b"\r\n\r\n") == len([f for f in decode_all(data) if f.dispatch])
    chunks = [orjson.loads(f.data) for f in decode_all(data) if f.dispatch]
    parts = [p for c in chunks for p in c["candidates"][0].get("content", {}).get("parts", [])]
    calls = [p["functionCall"] for p in parts if "functionCall" in p]
    assert [c["args"] for c in calls] == [json.loads(x.arguments) for x in TURN.items
                                          if isinstance(x, ToolCall)]  # objects, not text
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    assert b"[DONE]" not in data


# -- fragmenting, chunking, realistic arguments --------------------------------------------------

@pytest.mark.parametrize("fragmenting", [Fragmenting(1, 8), COARSE, Fragmenting(3, 3)])
def test_fragment_sizes(fragmenting: Fragmenting) -> None:
    text = realistic_arguments(3000, random.Random(1))
    turn = Turn((ToolCall("x", text),), fragmenting=fragmenting)
    engine = run("anthropic", [(0.0, encode("anthropic", turn, random.Random(5)))])
    (call,) = engine.state.calls.values()
    assert call.text == text
    sizes = [f.end - f.start for f in call.fragments if f.end > f.start]
    assert all(fragmenting.low <= s <= fragmenting.high for s in sizes[:-1])
    assert len(set(sizes)) > 1 or fragmenting.low == fragmenting.high


def test_network_chunks() -> None:
    data = ("data: " + "é日🚀x" * 200 + "\n\n").encode() * 20
    ends = [len(data) // 20 * (i + 1) for i in range(20)]
    chunks = network_chunks(data, random.Random(4), frame_ends=ends, inside_chars=1.0)
    assert b"".join(c for _, c in chunks) == data
    times = [t for t, _ in chunks]
    assert times == sorted(times) and times[0] >= 0.25
    assert network_chunks(data, random.Random(4), frame_ends=ends, inside_chars=1.0) == chunks
    # every multi-byte character has a read boundary inside it
    bounds = set()
    pos = 0
    for _, c in chunks:
        pos += len(c)
        bounds.add(pos)
    for i, byte in enumerate(data):
        if byte >= 0xC0:
            length = 2 + (byte >= 0xE0) + (byte >= 0xF0)
            assert bounds & set(range(i + 1, i + length)), i
    assert network_chunks(b"", random.Random(0)) == []
    sizes = [len(c) for _, c in network_chunks(data, random.Random(9), max_chunk=64)]
    assert max(sizes) <= 64 and min(sizes) >= 1


@pytest.mark.parametrize("size", [10_000, 100_000, 1_000_000])
def test_realistic_arguments(size: int) -> None:
    text = realistic_arguments(size, random.Random(size))
    value = orjson.loads(text)
    assert isinstance(value, dict)
    assert 0.9 * size <= len(text.encode()) <= 1.1 * size
    for needle in ('\\n', '\\"', '\\\\', '\\u00e9'):
        assert needle in text
    assert any(ord(ch) > 0xFFFF for ch in text) and any(0x80 <= ord(ch) < 0x800 for ch in text)
    assert realistic_arguments(size, random.Random(size)) == text


def test_many_parallel_calls_with_large_arguments() -> None:
    rng = random.Random(64)
    calls = tuple(ToolCall(f"tool_{i}", realistic_arguments(2_000, rng)) for i in range(64))
    turn = Turn(calls, fragmenting=COARSE)
    for protocol in PROTOCOLS:
        encoded = encode_turn(protocol, turn, random.Random(1))
        assert encoded.frame_ends[-1] == len(encoded.data)
        engine = run(protocol, network_chunks(encoded.data, random.Random(2), max_chunk=4096))
        check_round_trip(protocol, turn, engine)


# -- property: any turn, any protocol ------------------------------------------------------------

values = st.one_of(st.integers(-2**53, 2**53), st.booleans(), st.none(), st.text(max_size=12),
                   st.floats(allow_nan=False, allow_infinity=False, width=32))
valid_args = st.builds(lambda d, ascii_, spaced: json.dumps(
    d, ensure_ascii=ascii_, separators=(", ", ": ") if spaced else (",", ":")),
    st.dictionaries(st.text(max_size=6), values, max_size=4), st.booleans(), st.booleans())
items = st.one_of(
    st.builds(Text, st.text(min_size=1, max_size=30), st.sampled_from(["text", "reasoning"])),
    st.builds(ToolCall, st.sampled_from(["a", "lookup_demo_value", "tool_ü"]),
              st.one_of(valid_args, st.text(min_size=1, max_size=20))),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PROTOCOLS), st.lists(items, min_size=1, max_size=5),
       st.sampled_from(["normal", "length", "error"]), st.integers(0, 2**32),
       st.sampled_from([Fragmenting(1, 8), COARSE, Fragmenting(1, 1)]))
def test_any_turn_round_trips(protocol: str, listed: list, kind: str, seed: int,
                              fragmenting: Fragmenting) -> None:
    turn = Turn(tuple(listed), Stop(kind), fragmenting=fragmenting)  # type: ignore[arg-type]
    rng = random.Random(seed)
    stream = synthesize(protocol, turn, rng, inside_chars=rng.random())
    check_round_trip(protocol, turn, run(protocol, stream.chunks))
    rechunked = run(protocol, stream.chunks, f"random:{seed % 1000}")
    check_round_trip(protocol, turn, rechunked)
    if kind != "normal":  # a cut or failed turn never executes anything
        assert all(d.action == "refuse" for d in rechunked.pipeline.decisions.values())
