"""A steppable timeline: every engine step of one stream, and the state at any step by bisection.

:meth:`Timeline.build` runs the engine over the recorded chunks once and keeps every
:data:`~.engine.Step` in order. While it does, it indexes what the panes need, so that
:meth:`Timeline.view` answers "what did the world look like after step k?" without replaying:
argument text is append-only and every fragment knows its span, so a call's text at step k is
its text cut at the last fragment added by then (one bisection per call), and everything else
(frames, decisions, anomalies, the turn's facts) is a prefix of a list. A seek costs
O(calls x log steps), whatever the length of the session.

A timeline can also grow: :meth:`Timeline.live` starts an empty one, :meth:`Timeline.extend`
feeds each network read to the engine as it arrives and indexes the new steps, and
:meth:`Timeline.finish` closes the stream (the end-of-stream decisions come then). Every index is
append-only, so ``view(k)`` is the same whether it is asked while the stream grows or after a
:meth:`build` over the same chunks (``finished`` aside: it becomes true only once the stream is
closed). The timeline does no I/O: whoever reads the network calls :meth:`extend`.

Frames and chunks are *groups* of steps: a frame's group is its :class:`FrameStep` and the call
events, waits and decisions it caused; a chunk's group is its :class:`ChunkStep` and the frames it
completed. Stepping "by frame" lands on the last step of a group, so the panes show the frame's
whole effect.

The indexes :meth:`Timeline.view` cuts from are built in :mod:`.timeline_index`; the view it
returns and the step kinds are in :mod:`.timeline_view`. This module re-exports those names.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from typing import TypeVar

from .calls import TurnState
from .engine import CallPipeline, Engine, Step
from .events import ProviderError, StopReported, TurnEnded, UsageReported
from .lanes import Prefix, last_le
from .limits import DEFAULT_LIMITS, Limits
from .replay import Chunking, TimedBytes, replay
from .session_model import StreamEnd
from .timeline_index import TimelineIndex
from .timeline_view import KINDS, Kind, TurnView, View
from .tools import ToolSet

__all__ = ["KINDS", "RECORDED", "Kind", "Timeline", "TurnView", "View"]

_F = TypeVar("_F")

RECORDED = Chunking("recorded")


# -- the timeline ------------------------------------------------------------------------------

class Timeline(TimelineIndex):
    """Every step of one stream, indexed for O(log n) seeks. Build with :meth:`build`, or grow
    with :meth:`live`, :meth:`extend` and :meth:`finish`."""

    def __init__(self, source: list[TimedBytes], protocol: str | None, tools: ToolSet | None,
                 chunking: Chunking, cut: int | None, limits: Limits = DEFAULT_LIMITS) -> None:
        self.source = source
        self.protocol_requested = protocol
        self.tools = tools
        self.chunking = chunking
        self.cut = cut
        self.limits = limits
        """The engine's limits (a cut or a re-chunk of this timeline keeps them)."""
        super().__init__()
        self.engine = Engine(protocol, tools, limits)
        """The engine the steps come from (the index folds its steps; it never reads it)."""
        self.closed = False
        """The stream is over (built, or :meth:`finish` called): no step will be added."""
        self.end: StreamEnd | None = None
        """How the transport ended, when the caller of :meth:`finish` knows it."""
        self._pending: Iterator[Step] | None = None  # recorded steps not indexed yet

    # -- building --------------------------------------------------------------------------

    @classmethod
    def build(cls, chunks: Iterable[TimedBytes], protocol: str | None = None,
              tools: ToolSet | None = None, chunking: Chunking = RECORDED,
              cut: int | None = None, limits: Limits = DEFAULT_LIMITS) -> Timeline:
        timeline = cls.indexing(chunks, protocol, tools, chunking, cut, limits)
        timeline.index_more()
        return timeline

    @classmethod
    def indexing(cls, chunks: Iterable[TimedBytes], protocol: str | None = None,
                 tools: ToolSet | None = None, chunking: Chunking = RECORDED,
                 cut: int | None = None, limits: Limits = DEFAULT_LIMITS) -> Timeline:
        """A timeline of recorded chunks, indexed a slice at a time by :meth:`index_more` (an
        app shows the first steps of a long session while the rest is indexed). Until the last
        slice it is not closed; every view it gives meanwhile is the one :meth:`build` gives."""
        source = chunks if isinstance(chunks, list) else list(chunks)
        timeline = cls(source, protocol, tools, chunking, cut, limits)
        timeline._pending = replay(source, chunking=chunking, cut_at=cut, engine=timeline.engine)
        return timeline

    @property
    def indexing_pending(self) -> bool:
        """Recorded steps remain to be indexed (see :meth:`indexing`)."""
        return self._pending is not None

    def index_more(self, steps: int | None = None) -> bool:
        """Index up to ``steps`` more recorded steps (all of them by default); True when the
        whole stream is indexed (the timeline is then closed)."""
        if self._pending is None:
            return True
        before = len(self.steps)
        self._index(self._pending if steps is None else islice(self._pending, steps))
        if steps is None or len(self.steps) - before < steps:
            self._pending, self.closed = None, True
        return self._pending is None

    @classmethod
    def live(cls, protocol: str | None = None, tools: ToolSet | None = None,
             limits: Limits = DEFAULT_LIMITS) -> Timeline:
        """An empty timeline for a stream still arriving: feed it with :meth:`extend`."""
        return cls([], protocol, tools, RECORDED, None, limits)

    def extend(self, t: float | None, data: bytes) -> int:
        """One network read arrived: run it through the engine, index the new steps. Returns
        how many steps were added."""
        if self.closed or self._pending is not None:
            raise ValueError("the stream is closed: a finished timeline cannot grow")
        self.source.append((t, data))
        before = len(self.steps)
        self._index(self.engine.feed(data, t))
        return len(self.steps) - before

    def finish(self, end: StreamEnd | None = None) -> int:
        """The stream is over: the decoder flushes, the gate decides what is still open. Returns
        how many steps were added (0 when already closed)."""
        if self.closed or self._pending is not None:
            return 0
        before = len(self.steps)
        self._index(self.engine.close())
        self.closed, self.end = True, end
        return len(self.steps) - before

    def cut_at(self, offset: int) -> Timeline:
        """This stream as if the connection dropped after ``offset`` bytes (self is unchanged;
        on a growing timeline: the bytes received so far)."""
        offset = max(0, offset if self.cut is None else min(offset, self.cut))
        return Timeline.build(list(self.source), self.protocol_requested, self.tools, self.chunking,
                              offset, self.limits)

    def rechunked(self, chunking: Chunking) -> Timeline:
        return Timeline.build(list(self.source), self.protocol_requested, self.tools, chunking,
                              self.cut, self.limits)


    # -- facts -----------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.steps)

    def step(self, k: int) -> Step:
        return self.steps[k]

    @property
    def pipeline(self) -> CallPipeline:
        return self.engine.pipeline

    @property
    def state(self) -> TurnState:
        """The final state (after the last step)."""
        return self.engine.state

    @property
    def total_bytes(self) -> int:
        return self.chunks.ends[-1] if self.chunks else 0

    def data(self) -> bytes:
        """The stream's bytes as this timeline saw them (cut included)."""
        frames = self.frames
        return b"".join(frames.raw(i) for i in range(len(frames)))

    def step_for_frame(self, i: int) -> int:
        """The step at which frame ``i`` has been fully applied (the end of its group)."""
        if not self.frames:
            return 0
        return self._targets("frame")[min(max(i, 0), len(self.frames) - 1)]

    def frame_at(self, offset: int) -> int | None:
        """The index of the frame holding byte ``offset`` (frames cover the whole stream)."""
        if not self.frames:
            return None
        i = bisect_right(self.frames.starts, offset) - 1
        return min(max(i, 0), len(self.frames) - 1)

    def step_for_offset(self, offset: int) -> int:
        i = self.frame_at(offset)
        return 0 if i is None else self.step_for_frame(i)

    def chunk_time(self, chunk: int) -> float | None:
        return self.chunks.time(chunk) if 0 <= chunk < len(self.chunks) else None

    def frame_times(self, i: int) -> tuple[float | None, float | None]:
        """(arrival of the frame's first byte, arrival of its last byte), since the stream began."""
        frames, t0 = self.frames, self.t0
        if i < 0:
            i += len(frames)
        first = self.chunk_time(frames.first_chunks[i])
        last = self.chunk_time(frames.last_chunks[i])
        if t0 is None:
            return None, None
        return (None if first is None else first - t0), (None if last is None else last - t0)

    # -- navigation ------------------------------------------------------------------------

    def _targets(self, kind: Kind) -> Sequence[int]:
        if kind == "frame":  # a frame's group ends at the next frame or chunk
            return _GroupEnds(self.frame_steps, self.bounds, len(self.steps) - 1)
        if kind == "chunk":  # a chunk's group holds the frames it completed
            return _GroupEnds(self.chunk_steps, self.chunk_steps, len(self.steps) - 1)
        return self.by_kind[kind]

    def next_step(self, k: int, kind: Kind = "step") -> int | None:
        """The first step of ``kind`` after k (for frames and chunks: the end of their group)."""
        if kind == "step":
            return k + 1 if k + 1 < len(self.steps) else None
        targets = self._targets(kind)
        i = bisect_right(targets, k)
        return targets[i] if i < len(targets) else None

    def prev_step(self, k: int, kind: Kind = "step") -> int | None:
        if kind == "step":
            return k - 1 if k > 0 else None
        targets = self._targets(kind)
        i = bisect_left(targets, k) - 1
        return targets[i] if i >= 0 else None

    # -- the view --------------------------------------------------------------------------

    def view(self, k: int, since: int | None = None) -> View:
        """The state after step k. Text added after ``since`` (by default: after the step that
        opened the current frame or chunk group) is marked fresh."""
        if not self.steps:
            return View(-1, None, 0, None, -1, 0, 0, (), (), (), self._turn(-1), self.closed)
        k = min(max(k, 0), len(self.steps) - 1)
        nf = bisect_right(self.frame_steps, k)
        nc = bisect_right(self.chunk_steps, k)
        ib = last_le(self.bounds, k)
        anchor = self.bounds[ib] if ib >= 0 else -1
        if since is not None and since < k:
            anchor = since
        ncalls = bisect_right(self.call_created, k)
        calls = tuple(self.calls[key].view(k, anchor)
                      for key in self.call_order[:ncalls])
        return View(
            k=k, step=self.steps[k], frames_seen=nf,
            frame=self.frames[nf - 1] if nf else None, anchor=anchor,
            received=self.chunks.ends[nc - 1] if nc else 0, chunks_seen=nc, calls=calls,
            log=Prefix(self.log, bisect_right(self.by_kind["decision"], k)),
            anomalies=Prefix(self.anomalies, bisect_right(self.by_kind["anomaly"], k)),
            turn=self._turn(k), finished=self.closed and k == len(self.steps) - 1,
        )

    def _facts(self, kind: type[_F], k: int) -> list[_F]:
        steps, events = self.turn_facts[kind]
        return events[:bisect_right(steps, k)]  # type: ignore[return-value]

    def _turn(self, k: int) -> TurnView:
        terminal, stops = self._facts(TurnEnded, k), self._facts(StopReported, k)
        merged: dict[str, object] = {}
        for ev in self._facts(UsageReported, k):
            merged.update(ev.usage)
        text = {}
        for channel, steps in self.text_steps.items():
            n = bisect_right(steps, k)
            if n:
                text[channel] = self._text(channel)[:self.text_ends[channel][n - 1]]
        return TurnView(
            protocol=self.state.protocol,
            terminal=terminal[0] if terminal else None,
            stop=stops[-1] if stops else None,
            errors=tuple(self._facts(ProviderError, k)),
            usage=merged, text=text,
        )


class _GroupEnds(Sequence[int]):
    """The last step of each group opened by ``starts`` and closed by the next of ``bounds``
    (sorted, computed on demand)."""

    def __init__(self, starts: Sequence[int], bounds: Sequence[int], last: int) -> None:
        self._starts, self._bounds, self._last = starts, bounds, last

    def __len__(self) -> int:
        return len(self._starts)

    def __getitem__(self, i):  # type: ignore[no-untyped-def]
        i = bisect_right(self._bounds, self._starts[i])
        return self._bounds[i] - 1 if i < len(self._bounds) else self._last
