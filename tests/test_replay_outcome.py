"""replay_outcome (``replay --summary``) keeps only what the outcome needs: its calls count their
fragments instead of keeping them, its decisions keep no parsed arguments, and every record it
leaves is the full replay's."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from callscope.core import synth
from callscope.core.calls import TurnState
from callscope.core.ending import EndingWatch
from callscope.core.engine import ChunkStep, Engine, FrameStep
from callscope.core.fragments import FragmentCount, Fragments
from callscope.core.jsonprefix import Draft
from callscope.core.records import turn_record
from callscope.core.replay import Chunking, replay, replay_outcome
from callscope.core.session import open_input
from callscope.core.tools import ToolSet

ROOT = Path(__file__).resolve().parent.parent
INPUTS = sorted(p for p in [*(ROOT / "sessions").rglob("*.jsonl"),
                            *(ROOT / "tests" / "adversarial").glob("*.sse")])


def _outcome(chunks, protocol, tools, chunking):
    engine, watch = Engine(protocol, tools), EndingWatch()
    replay_outcome(chunks, engine, watch, chunking=chunking)
    return engine, watch


def _full(chunks, protocol, tools, chunking):
    engine, watch = Engine(protocol, tools), EndingWatch()
    for step in replay(chunks, chunking=chunking, engine=engine):
        if isinstance(step, ChunkStep):
            watch.chunk(step.end, step.t)
        elif isinstance(step, FrameStep):
            watch.frame(step.frame)
    return engine, watch


def _record(engine, watch):
    return turn_record(engine.pipeline, watch.ending(engine.state, "clean", None))


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.name)
@pytest.mark.parametrize("chunking", ["recorded", "bytes:5"])
def test_the_outcome_is_the_full_replays(path, chunking):
    session = open_input(str(path))
    chunks = [(c.t, c.data) for c in session.chunks()]
    protocol = getattr(session.header, "protocol", None)
    tools = ToolSet(list(getattr(session.header, "tools", None) or []))
    lean, lean_watch = _outcome(chunks, protocol, tools, Chunking.parse(chunking))
    full, full_watch = _full(chunks, protocol, tools, Chunking.parse(chunking))
    assert _record(lean, lean_watch) == _record(full, full_watch)
    assert lean.pipeline.decisions == {key: decision.without_arguments()
                                       for key, decision in full.pipeline.decisions.items()}
    for key, call in lean.state.calls.items():
        assert isinstance(call.fragments, FragmentCount)
        twin = full.state.calls[key]
        assert (len(call.fragments), call.draft) == (len(twin.fragments), twin.draft)


def test_a_big_turn_keeps_no_fragment_columns():
    rng = random.Random(3)
    turn = synth.Turn(items=(synth.ToolCall("edit_file", synth.realistic_arguments(50_000, rng)),),
                      fragmenting=synth.REALISTIC)
    data = synth.encode_turn("openai-responses", turn, rng).data
    engine, _ = _outcome([(0.0, data[i:i + 300]) for i in range(0, len(data), 300)],
                         "openai-responses", ToolSet(), Chunking.parse("recorded"))
    (call,) = engine.state.calls.values()
    assert len(call.fragments) > 1000 and call.draft is Draft.COMPLETE
    with pytest.raises(TypeError):
        call.fragments[0]
    with pytest.raises(TypeError):
        list(call.fragments)


def test_a_fragment_count_forks_and_compares_by_count_and_last_status():
    count = FragmentCount()
    assert not count and count.last_draft is Draft.EMPTY
    count.append(3, 0, 2, Draft.INCOMPLETE)
    twin = count.copy()
    count.append(4, 2, 5, Draft.COMPLETE)
    assert (len(twin), twin.last_draft, len(count), count.last_draft) == (
        1, Draft.INCOMPLETE, 2, Draft.COMPLETE)
    assert count != twin and count != Fragments() and Fragments() != count
    assert not TurnState("openai-responses").outcome_only  # (the default: the views read fragments)


def test_a_decision_without_arguments_keeps_everything_else():
    session = open_input(str(ROOT / "sessions" / "demo_complete.jsonl"))
    chunks = [(c.t, c.data) for c in session.chunks()]
    engine, _ = _full(chunks, session.header.protocol, ToolSet(session.header.tools),
                      Chunking.parse("recorded"))
    decisions = list(engine.pipeline.decisions.values())
    assert any(d.arguments is not None for d in decisions)
    for decision in decisions:
        lean = decision.without_arguments()
        assert lean.arguments is None and (lean.lenient is None or lean.lenient.arguments is None)
        assert (lean.action, lean.reason, lean.rule, lean.detail, lean.result, lean.ran,
                lean.draft, lean.contrast) == (decision.action, decision.reason, decision.rule,
                                               decision.detail, decision.result, decision.ran,
                                               decision.draft, decision.contrast)
