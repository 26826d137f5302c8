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


def noisy_turn(unknown: int, text: str = "") -> bytes:
    """A valid anthropic turn with ``unknown`` unknown events and a text block in front."""
    out = [ev("message_start", {"message": {"id": "m"}})]
    out += [ev("ping_of_death", {"n": i}) for i in range(unknown)]
    if text:
        out += [ev("content_block_start", {"index": 9, "content_block": {"type": "text", "text": ""}}),
                ev("content_block_delta", {"index": 9, "delta": {"type": "text_delta", "text": text}}),
                ev("content_block_stop", {"index": 9})]
    return out_turn(out)


def out_turn(prefix: list[str]) -> bytes:
    return "".join(prefix).encode() + turn('{"a": 1}').split(b"\n\n", 1)[1]


def test_anomalies_past_the_cap_are_counted_not_kept():
    engine, anomalies, decisions = run(noisy_turn(50), Limits(max_anomalies_per_code=10))
    codes = [a.code for a in anomalies]
    assert codes.count("unknown_event") == 10 and codes.count("anomalies_capped") == 1
    capped = next(a for a in anomalies if a.code == "anomalies_capped")
    assert "more than 10 unknown_event" in capped.message
    state = engine.state
    assert [a.code for a in state.anomalies].count("unknown_event") == 10
    assert state.anomaly_counts["unknown_event"] == 50  # every one counted
    assert state.anomaly_total == len(state.anomalies) + 40
    assert [d.action for d in decisions] == ["execute"]  # reading went on


def test_the_anomaly_cap_is_per_code_and_the_default_is_far_above_real_traffic():
    engine, anomalies, _ = run(noisy_turn(50), Limits())
    assert [a.code for a in anomalies].count("unknown_event") == 50
    assert "anomalies_capped" not in engine.state.anomaly_counts


def test_text_past_the_cap_is_counted_not_kept_and_calls_are_unaffected():
    engine, anomalies, decisions = run(noisy_turn(0, text="t" * 500), Limits(max_text_chars=100))
    state = engine.state
    assert sum(len(t) for parts in state.text.values() for t in parts) <= 100
    assert state.text_chars == 500
    assert [a.code for a in anomalies].count("text_capped") == 1
    assert [d.action for d in decisions] == ["execute"]


def test_cli_flags_set_the_anomaly_and_text_caps(tmp_path):
    path = tmp_path / "noisy.sse"
    path.write_bytes(noisy_turn(30, text="t" * 500))
    out = subprocess.run([sys.executable, "-m", "callscope.tui.cli", "replay", str(path), "--json",
                          "--max-anomalies-per-code", "5", "--max-text-chars", "100"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    records = [json.loads(line) for line in out.stdout.splitlines()]
    codes = [r.get("code") for r in records if r.get("kind") == "anomaly"]
    assert codes.count("unknown_event") == 5 and "anomalies_capped" in codes and "text_capped" in codes
    assert records[-1]["anomalies"] >= 30  # the turn counts every anomaly, kept or not


def test_cli_flags_set_the_depth_and_detection_limits(tmp_path):
    path = tmp_path / "deep.sse"
    path.write_bytes(turn('{"a": [[[[1]]]]}'))
    out = subprocess.run([sys.executable, "-m", "callscope.tui.cli", "replay", str(path), "--json",
                          "--summary", "--max-argument-depth", "3"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    call = json.loads(out.stdout.splitlines()[-1])["calls"][0]
    assert (call["action"], call["reason"]) == ("refuse", "invalid_json")
    noise = tmp_path / "noise.sse"
    noise.write_bytes(b"data: hello\n\n" * 5 + turn('{"a": 1}'))
    out = subprocess.run([sys.executable, "-m", "callscope.tui.cli", "replay", str(noise), "--json",
                          "--max-undetected-frames", "3"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    records = [json.loads(line) for line in out.stdout.splitlines()]
    assert "protocol_unknown" in [r.get("code") for r in records]
    assert records[-1]["protocol"] == "unknown"


def test_nothing_is_framed_after_an_overflow_in_the_first_read():
    # Found in review: a first read with a whole block and an oversized tail overflowed, then the
    # next reads were framed again (and overflowed a second time).
    decoder = SSEDecoder(max_block_bytes=8)
    first = decoder.feed(b"data: a\n\n" + b"x" * 10)
    assert [f.overflow for f in first] == [False, True]
    assert decoder.feed(b"\n\ndata: b\n\n") == []
    assert decoder.feed(b"y" * 20) == [] and decoder.close() == []
