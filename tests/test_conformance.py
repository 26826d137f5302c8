"""What every registered protocol must do, whatever its wire: a newly registered spec runs all of
these for free (docs/adding-a-protocol.md).

- a well-formed synthetic turn (``core.synth``) executes its calls under any chunking;
- no prefix of it that stops before its terminal frame executes anything;
- the reader forks equal (``copy.deepcopy``) at every frame boundary;
- detection recognises the protocol from its own synthetic stream;
- the spec's stop-reason table says what the reader does, and its documented cut reasons cut;
- the spec's empty-arguments rule is the reader's;
- data after the terminal signal, or after a ``[DONE]`` that did not end the turn, is reported
  as ``base.py`` says, and a ``[DONE]`` mid-stream lets nothing execute.
"""

from __future__ import annotations

import copy
import random

import pytest
from callscope.core.demo_tools import DEMO_TOOL_DEFINITIONS
from callscope.core.detect import detect
from callscope.core.engine import Engine
from callscope.core.events import Anomaly, CallEvent, StopReported
from callscope.core.frame import Frame
from callscope.core.framing import decode_all as decode_framed
from callscope.core.gate.codes import Code
from callscope.core.providers import ProtocolSpec
from callscope.core.providers.spec import UNKNOWN_STOP
from callscope.core.providers.specs import REGISTERED
from callscope.core.replay import Chunking, replay
from callscope.core.synth import NO_ARGUMENTS, Stop, Text, ToolCall, Turn, encode, encode_turn
from callscope.core.synth_framed import one_frame
from callscope.core.tools import ToolSet

SPECS = pytest.mark.parametrize("spec", REGISTERED, ids=lambda spec: spec.name)

TURN = Turn((
    Text("Looking it up — «naïve» 数据 ✅"),
    ToolCall("lookup_demo_value", '{"key": "Objective"}'),
    ToolCall("add_demo_numbers", '{"a": 19.5, "b": -3e2}'),
))
CALLS = 2
TOOLS = ToolSet(DEMO_TOOL_DEFINITIONS)


def stream(spec: ProtocolSpec, turn: Turn = TURN, seed: int = 3) -> bytes:
    return encode(spec.name, turn, random.Random(seed))


def decisions(protocol: str | None, chunks: list[tuple[float, bytes]],
              chunking: str = "recorded") -> list[str]:
    engine = Engine(protocol, TOOLS)
    for _ in replay(chunks, chunking=Chunking.parse(chunking), engine=engine):
        pass
    return [d.action for d in engine.pipeline.decisions.values()]


def frames_of(spec: ProtocolSpec, data: bytes) -> list[Frame]:
    """The stream's frames in the protocol's own framing (SSE, AWS event stream, NDJSON)."""
    return decode_framed(data, spec.framing)


def a_frame(spec: ProtocolSpec, data: bytes, eol: bytes) -> bytes:
    """One frame of the protocol carrying ``data``: an SSE ``data:`` block, or the framing's
    own (an event-stream message, an NDJSON line) as the protocol's encoder writes one."""
    if spec.framing == "sse":
        return b"data: " + data + eol + eol
    return one_frame(spec.name, "late", data)


def read(spec: ProtocolSpec, frames: list[Frame]) -> list[CallEvent]:
    reader = spec.new_reader()
    events = [e for f in frames if f.dispatch for e in reader.read(f)]
    return events + reader.finish()


def codes(events: list[CallEvent]) -> list[Code]:
    return [e.code for e in events if isinstance(e, Anomaly)]


@SPECS
@pytest.mark.parametrize("chunking", ["recorded", "whole", "bytes:1", "random:5"])
@pytest.mark.parametrize("detected", [False, True], ids=["named", "detected"])
def test_a_well_formed_turn_executes_under_any_chunking(spec: ProtocolSpec, chunking: str,
                                                        detected: bool) -> None:
    data = stream(spec)
    actions = decisions(None if detected else spec.name, [(0.0, data)], chunking)
    assert actions == ["execute"] * CALLS


@SPECS
def test_a_well_formed_turn_reads_without_an_anomaly(spec: ProtocolSpec) -> None:
    assert codes(read(spec, frames_of(spec, stream(spec)))) == []


def terminal_end(spec: ProtocolSpec, data: bytes, eol: bytes) -> int:
    """The shortest prefix that holds the frame carrying the terminal signal, whole: its end,
    less all but one byte of an SSE blank line (a CR alone ends a line, so CRLF CRLF is
    complete at its third byte); an event-stream message or an NDJSON line ends at its end."""
    engine = Engine(spec.name, TOOLS)
    engine.feed(data)
    engine.close()
    terminal = engine.state.terminal
    assert terminal is not None and terminal.frame is not None
    end = next(f.end for f in frames_of(spec, data) if f.index == terminal.frame)
    return end - max(len(eol) - 1, 0)


@SPECS
def test_a_prefix_executes_exactly_when_it_holds_the_terminal_frame(spec: ProtocolSpec) -> None:
    encoded = encode_turn(spec.name, TURN, random.Random(3))
    data = encoded.data
    end = terminal_end(spec, data, encoded.eol)
    for n in range(len(data) + 1):  # every byte offset: cut there, the stream ends
        engine = Engine(spec.name, TOOLS)
        engine.feed(data[:n])
        engine.close()
        actions = [d.action for d in engine.pipeline.decisions.values()]
        if n < end:
            assert "execute" not in actions, f"a cut at byte {n} of {end} executed"
        else:
            assert actions == ["execute"] * CALLS, f"the prefix of {n} bytes"


@SPECS
def test_the_reader_forks_equal_at_every_frame_boundary(spec: ProtocolSpec) -> None:
    frames = [f for f in frames_of(spec, stream(spec)) if f.dispatch]
    whole = read(spec, frames)
    for i in range(len(frames) + 1):
        reader = spec.new_reader()
        head = [e for f in frames[:i] for e in reader.read(f)]
        twin = copy.deepcopy(reader)
        rest = [e for f in frames[i:] for e in reader.read(f)] + reader.finish()
        twin_rest = [e for f in frames[i:] for e in twin.read(f)] + twin.finish()
        assert head + rest == whole
        assert twin_rest == rest, f"the fork at frame {i} read differently"


@SPECS
def test_detection_recognises_its_own_stream(spec: ProtocolSpec) -> None:
    for kind in ("normal", "length", "error"):
        data = stream(spec, Turn(TURN.items, Stop(kind)))
        found = [name for name in map(detect, frames_of(spec, data)) if name is not None]
        assert found and set(found) == {spec.name}, kind


@SPECS
def test_the_documented_cut_reasons_cut(spec: ProtocolSpec) -> None:
    assert spec.cut_reasons
    for reason in spec.cut_reasons:
        verdict = spec.classify(reason)
        assert verdict is not None and verdict.cut, reason
    cutting = {reason for reason, verdict in spec.stop_reasons.items() if verdict.cut}
    assert spec.cut_reasons <= cutting
    assert spec.classify("certainly not a documented reason") is None
    assert UNKNOWN_STOP.failed and not UNKNOWN_STOP.cut


@SPECS
@pytest.mark.parametrize("kind", ["normal", "length", "error"])
def test_the_stop_table_says_what_the_reader_reports(spec: ProtocolSpec, kind: str) -> None:
    turn = Turn(TURN.items, Stop(kind))
    stops = [e for e in read(spec, frames_of(spec, stream(spec, turn)))
             if isinstance(e, StopReported)]
    for stop in stops:
        verdict = spec.classify(stop.reason)
        assert verdict is not None, f"{stop.reason} is not in the spec's table"
        assert (verdict.cut, verdict.failed) == (stop.cut, stop.failed), stop.reason
    if kind == "length":
        assert stops and all(s.reason in spec.cut_reasons for s in stops)


@SPECS
def test_the_empty_arguments_rule_is_the_readers(spec: ProtocolSpec) -> None:
    reader = spec.new_reader()
    assert reader.name == spec.name
    assert reader.empty_arguments_mean_empty_object is spec.empty_arguments_mean_empty_object


@SPECS
def test_data_after_the_terminal_signal_is_reported(spec: ProtocolSpec) -> None:
    data = stream(spec)
    eol = encode_turn(spec.name, TURN, random.Random(3)).eol
    late = a_frame(spec, b'{"type": "late", "choices": []}', eol)
    events = read(spec, frames_of(spec, data + late))
    assert {Code.DATA_AFTER_TERMINAL, Code.DATA_AFTER_DONE} & set(codes(events))
    assert decisions(spec.name, [(0.0, data + late)]) == ["execute"] * CALLS


@SPECS
def test_a_done_mid_stream_lets_nothing_execute(spec: ProtocolSpec) -> None:
    data = stream(spec)
    eol = encode_turn(spec.name, TURN, random.Random(3)).eol
    first = frames_of(spec, data)[0].end
    done = a_frame(spec, b"[DONE]", eol)
    spliced = data[:first] + done + data[first:]
    events = read(spec, frames_of(spec, spliced))
    assert Code.DATA_AFTER_DONE in codes(events)
    assert "execute" not in decisions(spec.name, [(0.0, spliced)])


@SPECS
def test_a_tool_without_parameters_executes_with_an_empty_object(spec: ProtocolSpec) -> None:
    wire = NO_ARGUMENTS[spec.name]  # what the provider sends for it
    assert wire == ("" if spec.empty_arguments_mean_empty_object else "{}")
    tools = ToolSet([{"name": "list_demo_keys", "parameters": {
        "type": "object", "properties": {}, "additionalProperties": False}}])
    engine = Engine(spec.name, tools)
    engine.feed(stream(spec, Turn((ToolCall("list_demo_keys", wire),))))
    engine.close()
    assert [(d.action, d.arguments) for d in engine.pipeline.decisions.values()] == \
        [("execute", {})]
