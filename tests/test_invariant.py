"""The promise, tested exhaustively: no tool is ever executed from a truncated, invalid or
unvalidated turn, whatever the chunking and wherever the stream is cut.

Runs over every real recording in tests/fixtures and every bundled session (with their tool
definitions, and with every tool made known so that recordings reach the execute branch too).
"""

from __future__ import annotations

import pathlib
import random

import pytest
from callscope.core.check import check_input, dispatch_point
from callscope.core.engine import DecisionStep, Engine
from callscope.core.replay import Chunking, replay
from callscope.core.sse import decode_all
from callscope.core.tools import ToolSet
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = sorted((ROOT / "tests" / "fixtures").rglob("*.sse"))


def permissive_tools(data: bytes) -> ToolSet:
    """Every call name in the stream is a known tool accepting any object (so the gate can reach
    its execute branch on recordings that carry no tool definitions)."""
    engine = Engine()
    for _ in replay([(0.0, data)], engine=engine):
        pass
    names = {c.name for c in engine.state.calls.values() if c.name}
    return ToolSet([{"name": n, "parameters": {"type": "object"}} for n in sorted(names)])


def outcome(data: bytes, tools: ToolSet, chunking: Chunking, cut_at: int | None = None):
    return {s.decision.call: (s.decision.action, s.decision.reason, s.decision.arguments)
            for s in replay([(0.0, data)], tools=tools, chunking=chunking, cut_at=cut_at)
            if isinstance(s, DecisionStep)}


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_check_holds_on_every_recording(path):
    data = path.read_bytes()
    report = check_input(str(path), [(0.0, data)], protocol=None, tools=permissive_tools(data))
    assert report.ok, report.violations
    assert report.cuts == len(data) + 1


def test_some_recordings_do_execute_with_permissive_tools():
    executed = 0
    for path in FIXTURES:
        data = path.read_bytes()
        executed += sum(a == "execute" for a, _, _ in
                        outcome(data, permissive_tools(data), Chunking("recorded")).values())
    assert executed >= 10  # the invariant above is not vacuous


SMALL = [p for p in FIXTURES if p.stat().st_size < 6000]


@pytest.mark.parametrize("path", SMALL[:6], ids=lambda p: p.name)
def test_every_cut_replayed_from_zero_matches_the_sweep(path):
    """Brute force, independent of check's shortcut: replay every cut offset from scratch."""
    data = path.read_bytes()
    tools = permissive_tools(data)
    full = outcome(data, tools, Chunking("whole"))
    frames = decode_all(data)
    terminal_point = None
    for frame in frames:
        sub = outcome(data, tools, Chunking("whole"), cut_at=frame.end)
        if any(a == "execute" for a, _, _ in sub.values()):
            terminal_point = dispatch_point(frame, "sse")
            break
    for k in range(len(data) + 1):
        cut = outcome(data, tools, Chunking("whole"), cut_at=k)
        for call, (action, _, arguments) in cut.items():
            if action == "execute":
                assert full[call] == ("execute", None, arguments), (k, call)
                assert terminal_point is not None and k > terminal_point, (k, call)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(FIXTURES), st.integers(0, 2**32 - 1), st.integers(1, 97))
def test_decisions_do_not_depend_on_chunking(path, seed, size):
    data = path.read_bytes()
    tools = permissive_tools(data)
    expected = outcome(data, tools, Chunking("whole"))
    assert outcome(data, tools, Chunking("random", seed=seed)) == expected
    assert outcome(data, tools, Chunking("bytes", size=size)) == expected


def test_random_chunkings_with_arbitrary_cuts_never_execute_early():
    rng = random.Random(7)
    for path in FIXTURES:
        data = path.read_bytes()
        tools = permissive_tools(data)
        full = outcome(data, tools, Chunking("whole"))
        for _ in range(5):
            k = rng.randint(0, len(data))
            cut = outcome(data, tools, Chunking("random", seed=rng.randint(0, 999)), cut_at=k)
            for call, (action, _, arguments) in cut.items():
                if action == "execute":
                    assert full[call][0] == "execute" and full[call][2] == arguments


SESSIONS = sorted((ROOT / "sessions").rglob("*.jsonl"))


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: str(p.relative_to(ROOT / "sessions")))
def test_check_holds_on_every_bundled_session(path):
    """With the session's own tool definitions: the demo tools really run on complete turns."""
    from callscope.tui.cli import LoadedInput, toolset_for

    loaded = LoadedInput(str(path))
    report = check_input(str(path), list(loaded.chunks()), protocol=loaded.protocol,
                         tools=toolset_for(loaded, None))
    assert report.ok, report.violations


def test_bundled_sessions_exercise_both_outcomes():
    from callscope.tui.cli import LoadedInput, toolset_for

    actions = set()
    for path in SESSIONS:
        loaded = LoadedInput(str(path))
        tools = toolset_for(loaded, None)
        actions.update(a for a, _, _ in outcome(b"".join(c for _, c in loaded.chunks()), tools,
                                                Chunking("whole")).values())
    assert actions == {"execute", "refuse"}
