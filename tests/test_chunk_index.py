"""A timeline's chunks are columns and its step list leaves chunk steps implicit
(core/chunk_index.py): every step read back, by index, slice or iteration, is the step the
engine made."""

from __future__ import annotations

import pathlib

from callscope.core.chunk_index import ChunkColumns, StepList
from callscope.core.engine import ChunkStep, Engine, FrameStep
from callscope.core.replay import Chunking, replay
from callscope.core.session import open_input
from callscope.core.timeline import Timeline
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_every_step_reads_back_as_the_engine_made_it() -> None:
    session = open_input(str(ROOT / "sessions/demo.jsonl"))
    chunks = [(c.t, c.data) for c in session.chunks()]
    made = list(replay(chunks, chunking=Chunking.parse("random:3"), engine=Engine()))
    timeline = Timeline.build(chunks, chunking=Chunking.parse("random:3"))
    steps = timeline.steps
    assert isinstance(steps, StepList) and isinstance(timeline.chunks, ChunkColumns)
    assert len(steps) == len(made) and list(steps) == made and steps == made
    assert [steps[k] for k in range(len(made))] == made and steps[-1] == made[-1]
    assert steps[3:40:7] == made[3:40:7]
    chunk_steps = [s for s in made if isinstance(s, ChunkStep)]
    assert list(timeline.chunks) == chunk_steps and timeline.chunks[-1] == chunk_steps[-1]
    assert timeline.chunks[2:5] == chunk_steps[2:5]
    assert list(timeline.chunk_steps) == [k for k, s in enumerate(made) if isinstance(s, ChunkStep)]
    assert list(steps.not_chunks()) == [s for s in made if not isinstance(s, ChunkStep)]
    objects = [s for s in made if not isinstance(s, (ChunkStep, FrameStep))]
    assert list(steps.objects()) == objects and objects and len(objects) < len(made) - len(
        chunk_steps)  # (the demo has frame steps, which objects() leaves out)
    assert not timeline.chunks.one_time() and timeline.chunks.time(0) == chunk_steps[0].t


def test_chunks_without_times_read_back_without_times() -> None:
    timeline = Timeline.build([(None, b"data: {}\n\n"), (None, b"data: [DONE]\n\n")])
    assert [c.t for c in timeline.chunks] == [None, None] and timeline.chunks.one_time()
    assert timeline.chunks[1] == ChunkStep(1, 10, 24, None)
    empty = ChunkColumns()
    assert empty.one_time() and len(empty) == 0


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), st.sampled_from([0.0, 0.5, -1.0, 3.25])), max_size=12))
def test_one_time_says_whether_every_chunk_arrived_at_the_first_ones_time(times) -> None:
    columns = ChunkColumns()
    for i, t in enumerate(times):
        columns.append(ChunkStep(i, i, i + 1, t), i)
        so_far = times[:i + 1]
        assert columns.one_time() == (so_far.count(so_far[0]) == len(so_far))
