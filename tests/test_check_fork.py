"""``callscope check``'s shortcuts, each against the plain way of doing the same thing.

* ``CallPipeline.fork()`` (and the cheap ``__deepcopy__`` of readers, records, call buffers and
  the JSON prefix checker behind it) must behave as a pipeline replayed from zero up to the same
  frame, and finishing a fork must leave the original untouched;
* ``replay.reads`` must give the pieces of ``rechunk`` without their times;
* ``Engine.push_reads`` and ``contrast=False`` must reach the decisions ``replay`` reaches.
"""

from __future__ import annotations

import pathlib

import msgspec.structs
import pytest
from callscope.core.check import BOUNDARIES_CHECKED, dispatch_point, each_cut, real_cuts
from callscope.core.engine import CallPipeline, DecisionStep, Engine
from callscope.core.frame import Frame
from callscope.core.framing import decode_all, framing_of, stream_framing
from callscope.core.replay import Chunking, reads, rechunk, replay
from callscope.core.tools import ToolSet
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = sorted((ROOT / "tests" / "fixtures").rglob("*.sse"))
SESSIONS = sorted((ROOT / "sessions").rglob("*.jsonl"))
MAX_FRAMES = 300  # replaying every prefix from zero is quadratic in frames


def _frames(data: bytes, protocol: str | None) -> list[Frame]:
    """The frames of a whole stream in its protocol's framing (an AWS event stream's messages,
    Ollama's lines), or as its first byte says."""
    return decode_all(data, framing_of(protocol))


def _inputs() -> list[tuple[str, bytes, str | None, ToolSet]]:
    from callscope.tui.cli import LoadedInput, toolset_for

    found = [(p.name, p.read_bytes(), None, ToolSet()) for p in FIXTURES]
    for path in SESSIONS:
        loaded = LoadedInput(str(path))
        found.append((path.name, b"".join(c for _, c in loaded.chunks()), loaded.protocol,
                      toolset_for(loaded, None)))
    return [item for item in found if len(_frames(item[1], item[2])) <= MAX_FRAMES]


INPUTS = _inputs()


def _picture(pipeline: CallPipeline) -> tuple:
    """Everything finishing a pipeline settles: decisions (with the lenient contrast and the
    draft status), anomalies, and each call's text, fragments and closing."""
    state = pipeline.state
    calls = {key: (call.text, len(call.fragments), call.closed, call.draft)
             for key, call in state.calls.items()}
    return (dict(pipeline.decisions), [a.code for a in state.anomalies], calls,
            state.terminal, state.stop, pipeline.protocol)


def test_inputs_cover_every_protocol():
    protocols = set()
    for _, data, protocol, tools in INPUTS:
        pipeline = CallPipeline(protocol, tools)
        for frame in _frames(data, protocol):
            pipeline.frame(frame)
        protocols.add(pipeline.protocol)
    assert {"openai-responses", "openai-chat", "anthropic", "gemini-interactions",
            "gemini-generate"} <= protocols


@pytest.mark.parametrize("name,data,protocol,tools", INPUTS, ids=[i[0] for i in INPUTS])
def test_a_finished_fork_is_the_stream_cut_there_and_leaves_the_original_alone(
        name, data, protocol, tools):
    frames = _frames(data, protocol)
    pipeline = CallPipeline(protocol, tools)
    for m in range(len(frames) + 1):
        before = _picture(pipeline)
        fork = pipeline.fork()
        fork.finish()
        fresh = CallPipeline(protocol, tools)
        for frame in frames[:m]:
            fresh.frame(frame)
        fresh.finish()
        assert _picture(fork) == _picture(fresh), (name, m)
        assert _picture(pipeline) == before, (name, m)  # the fork shared nothing it changed
        if m < len(frames):
            pipeline.frame(frames[m])
    pipeline.finish()
    whole = CallPipeline(protocol, tools)
    for frame in frames:
        whole.frame(frame)
    whole.finish()
    assert _picture(pipeline) == _picture(whole)


def _reader_state(pipeline: CallPipeline) -> dict:
    reader = pipeline.reader
    if reader is None:
        return {}
    return _plain({k: v for k, v in reader.__dict__.items() if k != "_out"})


def _plain(value: object) -> object:
    """A value as nested plain data, every object as its type and fields (some of a reader's
    objects compare by identity)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted(map(repr, value))
    slots = getattr(type(value), "__slots__", None)
    if hasattr(value, "__dict__") or slots:
        fields = dict(getattr(value, "__dict__", {}))
        fields.update((n, getattr(value, n)) for n in slots or () if hasattr(value, n))
        return (type(value).__name__, _plain(fields))
    return value


def _spoil(decisions: dict) -> None:
    """Change every arguments object these decisions hold, in place."""
    for decision in decisions.values():
        if isinstance(decision.arguments, dict):
            decision.arguments["__spoiled__"] = True
        elif isinstance(decision.arguments, list):
            decision.arguments.append("__spoiled__")


# A whole-object call decided at a cut before its turn's end: the gate takes the parse the
# reader handed over (CallBuffer.parsed_whole), which a fork must not share with its original.
HELD = [("held-parse", (ROOT / "tests" / "fixtures" / "gemini-generatecontent" /
                        "gemini_api_complete_functionCall_one_chunk.reconstructed.sse").read_bytes(),
         "gemini-generate", ToolSet([{"name": "weather", "parameters": {"type": "object"}}]))]


@pytest.mark.parametrize("to_finish", [False, True], ids=["fork", "fork_to_finish"])
@pytest.mark.parametrize("name,data,protocol,tools", INPUTS + HELD,
                         ids=[i[0] for i in INPUTS + HELD])
def test_a_finished_fork_shares_nothing_its_finish_changes(name, data, protocol, tools,
                                                            to_finish):
    """Finish a fork at every frame boundary, then spoil the arguments of the decisions its
    finish took: the original reads on and finishes as a pipeline never forked (decisions,
    anomalies, calls), and the reader's tables are as they were before each fork was finished (the
    finish-only fork shares them)."""
    frames = _frames(data, protocol)
    whole = CallPipeline(protocol, tools, contrast=False)
    for frame in frames:
        whole.push_frame(frame)
    whole.finish()
    pipeline = CallPipeline(protocol, tools, contrast=False)
    for m in range(len(frames) + 1):
        before = _reader_state(pipeline)
        fork = pipeline.fork(to_finish=to_finish)
        fork.finish()
        assert _reader_state(pipeline) == before, (name, m)
        _spoil({k: d for k, d in fork.decisions.items() if k not in pipeline.decisions})
        if m < len(frames):
            pipeline.push_frame(frames[m])
    pipeline.finish()
    assert _picture(pipeline) == _picture(whole)


@pytest.mark.parametrize("name,data,protocol,tools", INPUTS, ids=[i[0] for i in INPUTS])
def test_a_fork_read_to_the_end_first_does_not_change_the_original(name, data, protocol, tools):
    """Reading mutates the reader's per-call records and the call buffers: a fork fed the rest of
    the stream before the original must not leak into it, and both must end as one pipeline."""
    frames = _frames(data, protocol)
    whole = CallPipeline(protocol, tools)
    for frame in frames:
        whole.frame(frame)
    whole.finish()
    expected = _picture(whole)
    pipeline = CallPipeline(protocol, tools)
    marks = set(range(0, len(frames) + 1, max(1, len(frames) // 6)))
    for m in range(len(frames) + 1):
        if m in marks:
            fork = pipeline.fork()
            for frame in frames[m:]:
                fork.frame(frame)
            fork.finish()
            assert _picture(fork) == expected, (name, m)
        if m < len(frames):
            pipeline.frame(frames[m])
    pipeline.finish()
    assert _picture(pipeline) == expected


@pytest.mark.parametrize("name,data,protocol,tools", INPUTS[::2], ids=[i[0] for i in INPUTS[::2]])
def test_each_cut_visits_every_class_as_a_fresh_pipeline_finishes_it(name, data, protocol, tools):
    """check.each_cut (forks, the last class the pipeline itself) against a pipeline fed each
    prefix from zero and finished: the same decisions, and the same first terminal class."""
    frames = _frames(data, protocol)
    seen: dict[int, dict] = {}
    terminal = each_cut(frames, CallPipeline(protocol, tools, contrast=False),
                        lambda m, finished: seen.setdefault(m, dict(finished.decisions)))
    assert sorted(seen) == list(range(len(frames) + 1))
    expected_terminal = None
    for m in range(len(frames) + 1):
        fresh = CallPipeline(protocol, tools, contrast=False)
        for frame in frames[:m]:
            fresh.push_frame(frame)
        if expected_terminal is None and fresh.state.complete:
            expected_terminal = m
        fresh.finish()
        assert seen[m] == fresh.decisions, (name, m)
    assert terminal == expected_terminal


def _decisions(steps) -> dict:
    return {s.decision.call: s.decision for s in steps if isinstance(s, DecisionStep)}


@pytest.mark.parametrize("name,data,protocol,tools", INPUTS[::3], ids=[i[0] for i in INPUTS[::3]])
def test_push_reads_without_contrast_decides_as_replay(name, data, protocol, tools):
    chunks = [(0.0, data[i:i + 97]) for i in range(0, len(data), 97)]
    expected = _decisions(replay(chunks, protocol=protocol, tools=tools))
    for chunking in (Chunking("recorded"), Chunking("bytes", size=1), Chunking("random", seed=5)):
        engine = Engine(protocol, tools, contrast=False)
        engine.push_reads(reads(chunks, chunking))
        engine.close()
        got = engine.pipeline.decisions
        assert got == {k: msgspec.structs.replace(d, lenient=None) for k, d in expected.items()}
    assert any(d.lenient is not None for d in expected.values()) or not expected


@settings(max_examples=200, deadline=None)
@given(chunks=st.lists(st.binary(max_size=40), max_size=12),
       mode=st.sampled_from(["recorded", "whole", "bytes", "random"]),
       size=st.integers(1, 9), seed=st.integers(0, 99),
       cut_at=st.none() | st.integers(0, 300))
def test_reads_are_the_pieces_of_rechunk(chunks, mode, size, seed, cut_at):
    timed = [(float(i), c) for i, c in enumerate(chunks)]
    chunking = Chunking(mode, size=size if mode == "bytes" else 0,
                        seed=seed if mode == "random" else 0)
    assert list(reads(timed, chunking, cut_at)) == [c for _, c in rechunk(timed, chunking, cut_at)]


@pytest.mark.parametrize("name,data,protocol,tools", INPUTS[::2], ids=[i[0] for i in INPUTS[::2]])
def test_real_cuts_reach_both_sides_of_every_boundary_they_name(name, data, protocol, tools):
    """check's real cuts: the empty stream, each side of the first dispatch points and of the
    terminal frame's (the last terminated frame's without one), a cut inside each of the first
    ones; never the whole stream (part 1 replays it), in order, each once."""
    frames = _frames(data, protocol)
    framing = stream_framing(framing_of(protocol), data)
    points = [dispatch_point(f, framing) for f in frames]
    terminal = each_cut(frames, CallPipeline(protocol, tools, contrast=False), lambda m, f: None)
    cuts = real_cuts(points, terminal, len(data))
    assert cuts == sorted(set(cuts)) and all(0 <= k < len(data) for k in cuts)
    assert 0 in cuts or not data
    named = points[:BOUNDARIES_CHECKED]
    if terminal is not None:
        named.append(points[terminal - 1])
    elif any(f.terminated for f in frames):  # (a cut stream: its last whole frame's point)
        named.append(dispatch_point([f for f in frames if f.terminated][-1], framing))
    for point in named:
        assert {point, point + 1} & set(range(len(data))) <= set(cuts), (name, point)
    for before, after in zip(points[:BOUNDARIES_CHECKED], points[1:BOUNDARIES_CHECKED + 1],
                             strict=False):
        assert any(before + 1 < k < after for k in cuts) or after - before < 3, (name, before)
