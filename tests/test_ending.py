"""How and where a stream ended, said once (core/ending.py), in replay's turn record."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

from callscope.core.ending import ending
from callscope.core.engine import Engine, FrameStep

ROOT = pathlib.Path(__file__).resolve().parent.parent


def turn(*args: str) -> dict:
    run = subprocess.run([sys.executable, "-m", "callscope.tui.cli", "replay", *args, "--json",
                          "--summary"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    (record,) = [json.loads(line) for line in run.stdout.splitlines()]
    return record


def test_the_demo_says_it_was_reset_mid_body_and_which_frame_never_came() -> None:
    ended = turn("sessions/demo.jsonl")["ending"]
    assert (ended["transport"], ended["bytes"], ended["signal"]) == ("reset", 8329, None)
    assert ended["absent"] == ("response.function_call_arguments.delta at #20 was never "
                               "dispatched: the stream ended before its blank line")
    assert ended["line"].startswith("transport reset by the peer at byte 8329")


def test_a_terminal_frame_without_its_blank_line_is_named() -> None:
    data = (ROOT / "tests/fixtures/anthropic/tool_no_args_empty_partial_json.sse").read_bytes()
    body = data.rstrip(b"\r\n")  # the stream's last block (its message_stop) loses its blank line
    engine = Engine()
    steps = engine.feed(body) + engine.close()
    frames = [s.frame for s in steps if isinstance(s, FrameStep)]
    said = ending(engine.state, transport="clean", received=len(body), t=None,
                  last_frame=frames[-1])
    assert frames[-1].terminated is False
    assert said.signal is None and said.absent is not None
    assert said.absent == (f"message_stop at #{frames[-1].index} was never dispatched: the "
                           "stream ended before its blank line")


def test_the_stop_reason_frame_is_named_when_it_is_not_the_terminal_one() -> None:
    ended = turn("sessions/anthropic/max_tokens.jsonl")["ending"]
    assert ended["signal"] == "message_stop" and ended["stop_reason"] == "max_tokens"
    assert ended["stop_frame"] == ended["signal_frame"] - 1
    assert f"stop reason max_tokens at #{ended['stop_frame']}" in ended["line"]


def test_a_cut_asked_for_is_the_transport_end() -> None:
    ended = turn("sessions/openai-chat/single_call.jsonl", "--cut-at", "2000")["ending"]
    assert (ended["transport"], ended["bytes"], ended["detail"]) == ("cut", 2000, "--cut-at 2000")


def test_zero_bytes() -> None:
    engine = Engine("anthropic")
    engine.close()
    said = ending(engine.state, transport="clean", received=0, t=None)
    assert said.absent == "not one byte arrived"


def test_a_frame_cut_short_is_said_in_its_framings_terms() -> None:
    """Ollama's NDJSON and Bedrock's event stream have no blank line: the ending said 'the
    stream ended before its blank line' for them too."""
    ollama = turn("sessions/ollama-chat/truncated_mid_arguments.jsonl")["ending"]
    assert ollama["absent"] == ("the line at #8 was never dispatched: the stream ended before "
                                "its line end")
    assert "blank line" not in ollama["line"]
    bedrock = turn("sessions/bedrock-converse/truncated_mid_arguments.jsonl")["ending"]
    assert bedrock["absent"] == ("the message at #29 was never dispatched: the stream ended "
                                 "before the last of the bytes its prelude counts")
    assert "blank line" not in bedrock["line"]
