"""The timeline's lazy frames against the engine's own, decided by a differential test.

A timeline keeps its frames as columns over one buffer of their bytes and makes each frame (and
its frame step) again when asked (core/frame_columns.py, core/chunk_index.py). Whatever is asked,
the answer must be what the engine made: every step, every frame (by index, from the end, in
slices, iterated), every frame's bytes and times, and every view, against a timeline that keeps
every frame as it came (``LAZY_FRAMES = False``). Streams of every protocol (so every framing)
are synthesized, mutated (the hot-path test's mutations, plus SSE lines the lazy frames must not
take: comments, ids, retries, CR line ends), cut, and fed in random reads, whole or as they grow.
"""

from __future__ import annotations

import random

from callscope.core import synth
from callscope.core.engine import ChunkStep, FrameStep, Step
from callscope.core.frame import Frame
from callscope.core.framing import framing_of
from callscope.core.lanes import Prefix
from callscope.core.replay import replay
from callscope.core.timeline import Timeline, View
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import fields
from test_hot_path_differential import PROTOCOLS, mutate, reads, tools, turn


class EagerTimeline(Timeline):
    """The reference: every frame kept as the engine made it."""

    LAZY_FRAMES = False


ODD_BLOCKS = [b": keep-alive", b"id: 7", b"retry: 300", b"data:x", b"event: ping\ndata: {}",
              b"id: 8\ndata: {\"type\": \"x\"}", b"", b"\xef\xbb\xbfdata: {}"]


def oddities(rng: random.Random, data: bytes, eol: bytes, count: int) -> bytes:
    """SSE blocks a lazy frame must not take, inserted between blocks (an id also changes the
    last event id of every later frame); sometimes every line end made CRLF."""
    if eol not in (b"\n", b"\r\n"):
        return data
    sep = eol + eol
    blocks = data.split(sep)
    for _ in range(count):
        block = rng.choice(ODD_BLOCKS).replace(b"\n", eol)
        blocks.insert(rng.randint(0, len(blocks)), block)
    data = sep.join(blocks)
    return data.replace(b"\n", b"\r\n") if eol == b"\n" and rng.random() < 0.1 else data


def seen(view: View) -> list[object]:
    return [list(value) if isinstance(value, Prefix) else value
            for value in (getattr(view, f.name) for f in fields(view))]


def assert_same(lazy: Timeline, eager: Timeline, steps: list[Step], rng: random.Random) -> None:
    frames: list[Frame] = [s.frame for s in steps if isinstance(s, FrameStep)]
    assert len(lazy) == len(steps)
    assert [lazy.step(k) for k in range(len(lazy))] == steps
    assert list(lazy.steps) == steps
    assert list(lazy.steps.not_chunks()) == [s for s in steps if not isinstance(s, ChunkStep)]
    assert list(eager.frames) == frames
    assert len(lazy.frames) == len(frames)
    assert [lazy.frames[i] for i in range(len(frames))] == frames
    assert list(lazy.frames) == frames and lazy.frames == frames
    if frames:
        assert lazy.frames[-1] == frames[-1]
        a = rng.randrange(len(frames))
        b = rng.randint(a, len(frames))
        assert list(lazy.frames[a:b]) == frames[a:b] and lazy.frames[a:] == frames[a:]
        assert list(lazy.frames[::2]) == frames[::2] and list(lazy.frames[::-3]) == frames[::-3]
        assert list(lazy.frames[a:][1:]) == frames[a:][1:]
        assert lazy.frames[a:][-1] == frames[-1] and len(lazy.frames[a:b]) == b - a
    assert [lazy.frames.raw(i) for i in range(len(frames))] == [f.raw for f in frames]
    assert lazy.data() == eager.data() == b"".join(f.raw for f in frames)
    assert [lazy.frame_times(i) for i in range(len(frames))] == \
        [eager.frame_times(i) for i in range(len(frames))]
    for offset in rng.sample(range(lazy.total_bytes + 2), min(20, lazy.total_bytes + 2)):
        assert lazy.frame_at(offset) == eager.frame_at(offset)
    for k in range(len(lazy)):
        assert seen(lazy.view(k)) == seen(eager.view(k))


@settings(max_examples=50, deadline=None, database=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(protocol=st.sampled_from(PROTOCOLS), seed=st.integers(0, 2**32),
       calls=st.integers(0, 3), texts=st.integers(0, 2),
       stop=st.sampled_from(["normal", "normal", "length", "error"]),
       mutations=st.integers(0, 3), odd=st.integers(0, 3), detect=st.booleans(),
       live=st.booleans())
def test_lazy_frames_are_the_frames_the_engine_made(protocol, seed, calls, texts, stop, mutations,
                                                    odd, detect, live):
    rng = random.Random(seed)
    encoded = synth.encode_turn(protocol, turn(rng, calls, texts, stop), rng)
    data = oddities(rng, mutate(rng, encoded.data, encoded.eol, mutations), encoded.eol, odd)
    if rng.random() < 0.2:
        data = data[:rng.randint(0, len(data))]  # the connection dropped
    if rng.random() < 0.5:
        source = synth.network_chunks(data, rng)
    else:
        source = [(None if rng.random() < 0.3 else i * 0.01, c)
                  for i, c in enumerate(reads(rng, data))]
    given_protocol = None if detect else protocol
    steps = list(replay(source, protocol=given_protocol, tools=tools()))
    eager = EagerTimeline.build(source, given_protocol, tools())
    if live:  # (grown read by read: frames are asked for while it grows)
        lazy = Timeline.live(given_protocol, tools())
        for t, chunk in source:
            lazy.extend(t, chunk)
            if lazy.frames:
                assert lazy.frames[-1] == eager.frames[len(lazy.frames) - 1]
        lazy.finish()
    else:
        lazy = Timeline.build(source, given_protocol, tools())
    assert_same(lazy, eager, steps, rng)


def test_the_comparison_is_not_idle():
    """On clean SSE streams every frame is kept as columns (a stream of another framing keeps
    them as they came), and an odd block is kept as it came: both sides of the store are
    taken by the test above."""
    rng = random.Random(4)
    for protocol in PROTOCOLS:
        items = tuple(synth.ToolCall("edit_file", synth.realistic_arguments(600, rng))
                      for _ in range(2))
        encoded = synth.encode_turn(protocol, synth.Turn(items=items), rng)
        timeline = Timeline.build([(None, encoded.data)], protocol, tools())
        frames = timeline.frames
        kept = sum(frames.is_kept(i) for i in range(len(frames)))
        if framing_of(protocol) == "sse":
            assert kept == 0, protocol
        else:
            assert kept == len(frames), protocol
    data = b'data: {"a": 1}\n\n: keep-alive\n\nid: 3\ndata: {}\n\ndata: {}\n\n'
    frames = Timeline.build([(None, data)], "openai-chat", tools()).frames
    assert [frames.is_kept(i) for i in range(4)] == [False, True, True, False]
    assert frames[3].last_event_id == "3"
