"""Display filters over frames, and text found across fragments."""

from __future__ import annotations

import pathlib

import pytest
from callscope.core import frame_query as q
from callscope.core.call_buffer import CallBuffer
from callscope.core.session import open_input
from callscope.core.timeline import Timeline
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def demo() -> Timeline:
    session = open_input(str(ROOT / "sessions/demo.jsonl"))
    return Timeline.build([(c.t, c.data) for c in session.chunks()])


def hits(timeline: Timeline, text: str) -> list[int]:
    return q.matching(q.frame_facts(timeline.steps, timeline.frames), q.parse(text))


def test_fields_and_operators(demo: Timeline) -> None:
    frames = demo.frames
    deltas = [f.index for f in frames if f.event == "response.function_call_arguments.delta"]
    assert hits(demo, "event = response.function_call_arguments.delta") == deltas
    assert hits(demo, "event ~ DELTA") == [f.index for f in frames if "delta" in (f.event or "")]
    second = hits(demo, "event ~ delta and call = 2")
    assert second and set(second) < set(deltas)
    assert hits(demo, "tool = delete_demo_file") == hits(demo, "call = 2")
    assert hits(demo, "not call = 2 and event ~ delta") == sorted(set(deltas) - set(second))
    assert hits(demo, "frame >= 18") == [18, 19, 20]
    assert hits(demo, "bytes = 8100-8200") == [20]
    assert hits(demo, 'text ~ "dry_r" and event ~ delta') == [17]  # (0, 1: the tool schemas)
    assert hits(demo, "(frame = 0 or frame = 20) and not event = response.created") == [20]
    assert hits(demo, "anomaly ~ missing") == []  # (missing_terminal is at the end of stream)


@pytest.mark.parametrize("text, where", [
    ("evnt = x", "unknown field 'evnt' at character 1"),
    ("event x", "an operator"),
    ("(event = a", "not closed"),
    ("event = a b", "unexpected 'b' at character 11"),
])
def test_a_filter_that_cannot_be_read_says_where(text: str, where: str) -> None:
    with pytest.raises(q.FilterError, match=where):
        q.parse(text)


def test_plain_text_is_not_a_filter() -> None:
    assert not q.looks_like_filter("dry_run")
    assert q.looks_like_filter("event ~ delta") and q.looks_like_filter("not (call = 1)")
    assert q.looks_like_filter("evnt = 1")  # (then refused: unknown field)


def test_text_is_found_across_fragments(demo: Timeline) -> None:
    # "notes/todo" arrives split over several argument deltas: no single frame's bytes hold it.
    assert not any(b"notes/todo" in f.raw for f in demo.frames)
    found = q.text_frames(demo.state.calls.values(), demo.steps, "notes/todo")
    assert len(found) >= 2 and all(demo.frames[i].event.endswith("arguments.delta") for i in found)


def test_an_invoke_model_chunk_matches_the_event_it_carries() -> None:
    """Every InvokeModel frame is a ``chunk`` on the wire; the frame list names the Anthropic
    event inside, and the filter's ``event`` matches it too (and still ``chunk``)."""
    session = open_input(str(ROOT / "sessions/bedrock-invoke/single_call.jsonl"))
    timeline = Timeline.build([(c.t, c.data) for c in session.chunks()])
    from callscope.core.providers.bedrock_invoke import carried_event
    inner = {f.index: carried_event(f) for f in timeline.frames}
    deltas = [i for i, name in inner.items() if name == "content_block_delta"]
    assert deltas and all(f.event == "chunk" for f in timeline.frames if f.index in deltas)
    assert hits(timeline, "event = content_block_delta") == deltas
    assert hits(timeline, "event = chunk.content_block_delta") == deltas
    assert hits(timeline, "event ~ message_st") == [i for i, n in inner.items()
                                                    if n in ("message_start", "message_stop")]
    assert hits(timeline, "event = chunk") == [f.index for f in timeline.frames if f.event == "chunk"]
    assert hits(timeline, "not event ~ delta") == [i for i in inner if "delta" not in (inner[i] or "")]


# -- the frames an occurrence overlaps, by bisection, against the definition --------------------

def _overlapping_by_definition(text: str, fragments: list[tuple[int | None, int, int]],
                               needle: str) -> set[int]:
    """Every fragment checked against every occurrence (quadratic: the definition itself)."""
    lowered, want = text.lower(), needle.lower()
    found, at = set(), lowered.find(want) if want else -1
    while at >= 0:
        end = at + len(want)
        found |= {frame for frame, start, stop in fragments
                  if frame is not None and start < end and stop > at}
        at = lowered.find(want, at + 1)
    return found


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["append", "append", "append", "replace"]),
                          st.text(alphabet="abAB\"", max_size=5),
                          st.one_of(st.none(), st.integers(0, 30))), max_size=30),
       st.text(alphabet="abAB\"", min_size=1, max_size=3))
def test_the_frames_a_call_text_search_finds_are_the_definitions(
        changes: list[tuple[str, str, int | None]], needle: str) -> None:
    """A call's text grows by fragments and is set whole again (whose fragments start at 0
    again, empty ones included); the frames found by bisection over the columns are those
    whose fragment overlaps an occurrence, found one by one."""
    call = CallBuffer("k", None)
    for kind, text, frame in changes:
        if kind == "append":
            call.append(frame, text)
        else:
            call.replace(frame, text, "serialized")
    spans = q.occurrences(call.text, needle)
    listed = [(f.frame, f.start, f.end) for f in call.fragments]
    assert call.fragments.frames_over(spans) == _overlapping_by_definition(call.text, listed, needle)
