"""The live-load benchmark (bench/live_bench.py) runs on a small stream: ``callscope serve`` paced
in events a second, the debugger reading it under Textual's pilot while keys are pressed.

Speeds are the benchmark's to report (``python -m bench.live_bench``); nothing here is timed.
What is checked is what must hold at any speed: every byte the server sent is in the session
file and in the timeline the panes show, a stream cut before its terminal event is refused as
truncated (call by call), the whole stream executes, and the keys pressed during the stream did
what they do."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # the bench/ directory is not an installed package

from bench.live_bench import live_load, report  # noqa: E402
from bench.streams import Spec, build  # noqa: E402

CALLS = 2


@pytest.fixture(scope="module")
def stream():
    return build(Spec("openai-chat", calls=CALLS, events=800), seed=3)


@pytest.mark.parametrize("cut", [True, False], ids=["cut", "whole"])
def test_every_byte_is_kept_and_the_gate_decides_as_it_should(stream, tmp_path, cut):
    result = live_load(stream, rate=2_000, gap=0.01, cut=cut, workdir=str(tmp_path))
    assert result.recorded_ok and result.shown_ok  # the session file and the panes: every byte
    assert result.end == "clean"  # the transport said all is well either way
    if cut:
        assert result.events == stream.events - 1
        assert result.decisions == {"refuse truncated": CALLS}
    else:
        assert result.events == stream.events
        assert result.decisions == {"execute": CALLS}
    assert result.reads >= result.events and result.arrival_rate > 0
    assert sum(len(v) for v in result.keys.values()) >= 1  # keys were pressed while it streamed
    assert result.moved == {}  # and each did what it does (home, a jump, follow)
    assert math.isfinite(result.catch_up)  # the panes came to show every byte
    lines = report(result)
    assert any(line.startswith("- key to screen") for line in lines)
    assert "**DIFFERENT**" not in "\n".join(lines)


def test_one_read_per_event_and_network_reads(stream, tmp_path):
    result = live_load(stream, rate=5_000, gap=0.01, per_event=False, workdir=str(tmp_path))
    assert result.recorded_ok and result.shown_ok
    assert result.reads > result.events  # synth's reads split events (~3 per event)
    assert result.decisions == {"refuse truncated": CALLS}


def test_every_read_goes_through_the_inbox_once_in_order(stream, tmp_path):
    # The app takes reads from its inbox a slice at a time (tui/inbox.py): each read is fed to
    # the engine exactly once, and the queue delays are measured for all of them.
    result = live_load(stream, rate=5_000, gap=0.01, workdir=str(tmp_path))
    assert result.recorded_ok and result.shown_ok and result.moved == {}
    assert result.decisions == {"refuse truncated": CALLS}
    assert len(result.queue) == result.reads
