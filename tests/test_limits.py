"""Limits are stated (core/limits.py), enforced where data arrives, and end in a clear refusal."""

from __future__ import annotations

import json
import subprocess
import sys

from callscope.core.engine import CallStep, DecisionStep, Engine
from callscope.core.events import Anomaly
from callscope.core.limits import Limits
from callscope.core.sse import SSEDecoder
from callscope.core.tools import ToolSet

TOOLS = ToolSet([{"name": "x", "input_schema": {"type": "object"}}])


def ev(kind: str, payload: dict) -> str:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **payload})}\n\n"


def turn(arguments: str, calls: int = 1) -> bytes:
    out = [ev("message_start", {"message": {"id": "m"}})]
    for i in range(calls):
        out += [ev("content_block_start", {"index": i, "content_block": {
                    "type": "tool_use", "id": f"t{i}", "name": "x", "input": {}}}),
                ev("content_block_delta", {"index": i, "delta": {"type": "input_json_delta",
                                                                 "partial_json": arguments}}),
                ev("content_block_stop", {"index": i})]
    out += [ev("message_delta", {"delta": {"stop_reason": "tool_use"}}), ev("message_stop", {})]
    return "".join(out).encode()


def run(data: bytes, limits: Limits, chunk: int = 64):
    engine = Engine(tools=TOOLS, limits=limits)
    steps = []
    for i in range(0, len(data), chunk):
        steps += engine.feed(data[i:i + chunk])
    steps += engine.close()
    anomalies = [s.event for s in steps if isinstance(s, CallStep) and isinstance(s.event, Anomaly)]
    decisions = [s.decision for s in steps if isinstance(s, DecisionStep)]
    return engine, anomalies, decisions


def test_within_limits_nothing_changes():
    _, anomalies, decisions = run(turn('{"a": "' + "z" * 300 + '"}'), Limits())
    assert [d.action for d in decisions] == ["execute"]
    assert not [a for a in anomalies if a.code == "limit_exceeded"]


def test_argument_limit_refuses_the_turn():
    engine, anomalies, decisions = run(turn('{"a": "' + "z" * 300 + '"}'), Limits(max_argument_chars=100))
    assert [a.code for a in anomalies].count("limit_exceeded") == 1
    assert [(d.action, d.reason) for d in decisions] == [("refuse", "truncated")]
    assert "limit" in decisions[0].detail
    assert engine.state.calls["block:0"].length <= 100


def test_frame_limit_stops_framing_and_bounds_memory():
    data = turn('{"a": "' + "z" * 5000 + '"}')
    engine, anomalies, decisions = run(data, Limits(max_block_bytes=1000), chunk=7)
    assert any(a.code == "limit_exceeded" for a in anomalies)
    assert [(d.action, d.reason) for d in decisions] == [("refuse", "truncated")]
    assert engine.decoder.pending == 0
    assert engine.decoder.bytes_received == len(data)


def test_call_limit():
    _, anomalies, decisions = run(turn("{}", calls=5), Limits(max_calls=3))
    assert any(a.code == "limit_exceeded" and "3 calls" in a.message for a in anomalies)
    assert [d.reason for d in decisions] == ["truncated"] * 3


def test_an_endless_line_fed_in_small_chunks_never_buffers_past_the_limit():
    decoder = SSEDecoder(max_block_bytes=4096)
    frames = []
    for _ in range(10_000):
        frames += decoder.feed(b"x" * 100)
        assert decoder.pending <= 4096 + 100
    frames += decoder.close()
    assert [f.overflow for f in frames] == [True]
    assert decoder.bytes_received == 1_000_000


def test_cli_flag_sets_the_limit(tmp_path):
    path = tmp_path / "big.sse"
    path.write_bytes(turn('{"a": "' + "z" * 300 + '"}'))
    out = subprocess.run([sys.executable, "-m", "callscope.tui.cli", "replay", str(path), "--json",
                          "--summary", "--max-argument-chars", "50"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    record = json.loads(out.stdout.splitlines()[-1])
    assert record["halted"].startswith("arguments of block:0 longer than 50")
    assert record["calls"][0]["reason"] == "truncated"


def test_detection_gives_up_after_the_frame_limit():
    engine = Engine(limits=Limits(max_undetected_frames=10))
    steps = engine.feed(b"data: {}\n\n" * 50) + engine.close()
    codes = [s.event.code for s in steps if isinstance(s, CallStep) and isinstance(s.event, Anomaly)]
    assert codes.count("protocol_unknown") == 1
    assert engine.pipeline._undetected == [] and engine.pipeline.protocol == "unknown"


def test_check_refuses_to_hold_a_session_past_the_size_limit(tmp_path):
    path = tmp_path / "big.sse"
    path.write_bytes(turn("{}") * 4)
    out = subprocess.run([sys.executable, "-m", "callscope.tui.cli", "check", str(path),
                          "--max-session-bytes", "100"], capture_output=True, text=True)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.count("\n") == 1 and str(path) in out.stderr and "--max-session-bytes" in out.stderr


def test_protocol_unknown_given_on_the_command_line_replays_frames_only(tmp_path):
    path = tmp_path / "x.sse"
    path.write_bytes(turn("{}"))
    out = subprocess.run([sys.executable, "-m", "callscope.tui.cli", "replay", str(path), "--json",
                          "--protocol", "unknown"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    records = [json.loads(line) for line in out.stdout.splitlines()]
    assert {r["kind"] for r in records} == {"frame", "turn"}
    assert records[-1]["protocol"] == "unknown" and records[-1]["calls"] == []
