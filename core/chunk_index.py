"""A timeline's network chunks as columns, and its step list with the chunk and frame steps left
implicit.

A stream re-chunked a byte per read (``bytes:1``) has a chunk step per byte: kept as objects
(a named tuple and its integers, and an entry in four lists) each cost about 250 bytes, so a
3 MB stream took 0.8 GB. Here a chunk is four machine words in typed arrays (start, end, arrival
time, step number), and the step list holds ``None`` where a chunk step is: a
:class:`~.steps.ChunkStep` is made again, equal to the one the engine made, when asked for.
A frame step is held the same way, as a mark: its frame is in the frame columns
(:mod:`.frame_columns`), and the :class:`~.steps.FrameStep` is made again when asked for.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from typing import overload

from .engine import ChunkStep, FrameStep, Step
from .frame import Frame

NO_TIME = -math.inf
"""A chunk without an arrival time, in the times column (a float array cannot hold None)."""


class ChunkColumns(Sequence[ChunkStep]):
    """Every chunk so far: ``starts``, ``ends``, ``steps`` (the chunk's step number) and
    ``times`` (arrival, :data:`NO_TIME` when none), one entry per chunk; item ``i`` is chunk
    ``i`` as a :class:`ChunkStep`."""

    __slots__ = ("_first", "_varied", "ends", "starts", "steps", "times")

    def __init__(self) -> None:
        self.starts: array[int] = array("q")
        self.ends: array[int] = array("q")
        self.steps: array[int] = array("q")
        self.times: array[float] = array("d")
        self._first: float | None = None  # the first chunk's time
        self._varied = False  # a chunk's time is not the first's

    def append(self, chunk: ChunkStep, step: int) -> None:
        self.starts.append(chunk.start)
        self.ends.append(chunk.end)
        self.steps.append(step)
        t = NO_TIME if chunk.t is None else chunk.t
        if t != self._first:  # (known as it arrives: a scan of 3 million times took 76 ms)
            if self.times:
                self._varied = True
            else:
                self._first = t
        self.times.append(t)

    def time(self, i: int) -> float | None:
        t = self.times[i]
        return None if t == NO_TIME else t

    def one_time(self) -> bool:
        """Every chunk arrived at the same time (or none has a time, or there are none): the
        recording says nothing about timing."""
        return not self._varied

    def __len__(self) -> int:
        return len(self.starts)

    @overload
    def __getitem__(self, i: int) -> ChunkStep: ...
    @overload
    def __getitem__(self, i: slice) -> list[ChunkStep]: ...

    def __getitem__(self, i: int | slice) -> ChunkStep | list[ChunkStep]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("chunk index out of range")
        return ChunkStep(i, self.starts[i], self.ends[i], self.time(i))

    def __iter__(self) -> Iterator[ChunkStep]:
        return (self[i] for i in range(len(self)))


class StepList(Sequence[Step]):
    """A timeline's steps in order; its chunk steps are those of :class:`ChunkColumns`, and with
    ``frames`` (the frames, and the step number of each) its frame steps are those frames'."""

    __slots__ = ("_chunks", "_frame_steps", "_frames", "_items", "add_object")

    def __init__(self, chunks: ChunkColumns,
                 frames: tuple[Sequence[Frame], Sequence[int]] | None = None) -> None:
        self._items: list[Step | None] = []  # None: a chunk step (see the chunk columns)
        self._chunks = chunks
        self._frames, self._frame_steps = frames if frames is not None else ((), ())
        self.add_object: Callable[[Step], None] = self._items.append
        """Add a step that is neither a chunk nor a frame step (the indexer's loop calls this
        per step)."""

    def add_chunk(self, step: ChunkStep, k: int) -> None:
        """Add chunk step ``step``, step number ``k`` (the next one), to the chunk columns."""
        self._chunks.append(step, k)
        self._items.append(None)

    def add_frame(self) -> None:
        """Add the step of the frame last added to the frames (the caller adds both)."""
        self._items.append(_FRAME)

    def append(self, step: Step) -> None:
        """Add a step (a chunk step goes into the chunk columns)."""
        if type(step) is ChunkStep:
            self.add_chunk(step, len(self._items))
        else:
            self.add_object(step)

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, k: int) -> Step: ...
    @overload
    def __getitem__(self, k: slice) -> list[Step]: ...

    def __getitem__(self, k: int | slice) -> Step | list[Step]:
        if isinstance(k, slice):
            return [self[j] for j in range(*k.indices(len(self)))]
        item = self._items[k]
        if item is not None and item is not _FRAME:
            return item
        if k < 0:
            k += len(self._items)
        if item is _FRAME:
            return FrameStep(self._frames[bisect_left(self._frame_steps, k)])
        return self._chunks[bisect_left(self._chunks.steps, k)]

    def __iter__(self) -> Iterator[Step]:
        chunk = 0
        frames = iter(self._frames)
        for item in self._items:
            if item is None:
                yield self._chunks[chunk]
                chunk += 1
            elif item is _FRAME:
                yield FrameStep(next(frames))
            else:
                yield item

    def not_chunks(self) -> Iterator[Step]:
        """Every step that is not a chunk step, in order (no chunk step is made)."""
        frames = iter(self._frames)
        return (FrameStep(next(frames)) if item is _FRAME else item
                for item in self._items if item is not None)

    def objects(self) -> Iterator[Step]:
        """Every step kept as an object (neither a chunk step nor a frame step), in order:
        what reads only the call events, decisions and waits, with no frame made."""
        return (item for item in self._items if item is not None and item is not _FRAME)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # (mutable, as a list)


_FRAME = FrameStep(None)  # type: ignore[arg-type]
"""The mark of a frame step in a step list's items (its frame is in the frame columns)."""
