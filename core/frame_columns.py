"""A timeline's frames as columns over one buffer of their bytes, each made a Frame when asked.

A long session has a frame per SSE event, and a :class:`~.frame.Frame` holds its bytes three
times (the raw block, its decoded lines, its data) beside a tuple per frame and one for its
lines: about 1.5 KB for a 300-byte event, most of a debugger's memory. Nearly every frame a
provider sends has one of the SSE decoder's two common shapes (``data: X``, or ``event: E`` then
``data: X``; LF or CRLF line ends, nothing else), and such a frame is a function of its bytes and its
place (its offsets, its chunks, the last event id in force). So its bytes go into one buffer, its
place into typed arrays, and the frame is made again, equal, when asked (a pane, the JSON output,
a search), by the decoder's own reading of those shapes (:func:`.sse_fields.common_shape`).

A frame is kept this way only if making it again gives it back exactly, checked as it is added;
every other frame (a comment, an id or retry line, a lone CR line end, a byte order mark, a stray
blank line, a cut tail, an overflow, a binary or NDJSON framing) is kept as it came.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from typing import overload

from .frame import Frame
from .sse_fields import common_shape

_CR = 0x0D
_new = tuple.__new__
"""Builds a :class:`Frame` without its generated ``__new__`` (every field given)."""
CACHE = 64
"""Frames made again that are kept (a pane asks for the rows it shows at every paint)."""


def _remade(i: int, start: int, end: int, raw: bytes, first_chunk: int, last_chunk: int,
            last_event_id: str) -> Frame | None:
    """Frame ``i`` from its bytes and its place, when its bytes have a common shape (LF line
    ends, or CRLF ones: Gemini's)."""
    if raw[-2] == _CR:
        text = raw[:-4].decode("utf-8", "replace").replace("\r\n", "\n")
    else:
        text = raw[:-2].decode("utf-8", "replace")
    shape = common_shape(text)
    if shape is None:
        return None
    return _new(Frame, (i, start, end, raw, shape[0], first_chunk, last_chunk, shape[1], shape[2],
                        last_event_id, None, (), True, True, False, (), None))


class _Frames(Sequence[Frame]):
    """Frames by index: the columns' (:class:`FrameColumns`) or a slice of them (a view, not a
    list: a search reads every frame from one on, one at a time)."""

    __slots__ = ()

    def _indexes(self) -> range:
        raise NotImplementedError

    def _columns(self) -> FrameColumns:
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self._indexes())

    @overload
    def __getitem__(self, i: int) -> Frame: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Frame]: ...

    def __getitem__(self, i: int | slice) -> Frame | Sequence[Frame]:
        indexes = self._indexes()
        if isinstance(i, slice):
            return _Slice(self._columns(), indexes[i])
        try:
            return self._columns()._one(indexes[i])
        except IndexError:
            raise IndexError("frame index out of range") from None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # (mutable, as a list)


class FrameColumns(_Frames):
    """Every frame so far, in order (frame ``i`` is item ``i``): ``starts``, ``ends``,
    ``first_chunks`` and ``last_chunks`` are columns read without making a frame; an item is a
    :class:`Frame` equal to the one the decoder made. With ``lazy=False`` every frame is kept as
    it came (the reference the differential test compares with)."""

    __slots__ = ("_buf", "_cache", "_ids", "_kept", "_kept_order", "_offsets", "first_chunks",
                 "last_chunks", "lazy", "ends", "starts")

    def __init__(self, *, lazy: bool = True) -> None:
        self.lazy = lazy
        self.starts: array[int] = array("q")
        self.ends: array[int] = array("q")
        self.first_chunks: array[int] = array("q")
        self.last_chunks: array[int] = array("q")
        self._offsets: array[int] = array("q")
        """Where the frame's bytes start in the buffer (never decreasing: a frame kept as it came
        has none there, and its offset is the next frame's), so a byte of the buffer belongs to
        the last frame whose offset is at or before it (:meth:`find_lower`)."""
        self._ids: list[str] = []  # the last event id in force (the decoder's one string, shared)
        self._buf = bytearray()
        self._kept: dict[int, Frame] = {}
        self._kept_order: array[int] = array("q")
        """The indexes of the frames kept as they came, in order."""
        self._cache: dict[int, Frame] = {}

    def append(self, frame: Frame) -> None:
        i = len(self._offsets)
        start, end, raw = frame.start, frame.end, frame.raw
        self.starts.append(start)
        self.ends.append(end)
        self.first_chunks.append(frame.first_chunk)
        self.last_chunks.append(frame.last_chunk)
        self._ids.append(frame.last_event_id)
        if (self.lazy and end - start == len(raw)
                and (raw[-2:] == b"\n\n" and _CR not in raw or raw[-4:] == b"\r\n\r\n")
                and _remade(i, start, end, raw, frame.first_chunk, frame.last_chunk,
                            frame.last_event_id) == frame):
            self._offsets.append(len(self._buf))
            self._buf += raw
        else:
            self._offsets.append(len(self._buf))
            self._kept[i] = frame
            self._kept_order.append(i)

    def is_kept(self, i: int) -> bool:
        """Whether frame ``i`` is kept as it came (not made again from the buffer)."""
        return i in self._kept

    def raw(self, i: int) -> bytes:
        """Frame ``i``'s bytes (no frame made)."""
        if i < 0:
            i += len(self._offsets)
        kept = self._kept.get(i)
        if kept is not None:
            return kept.raw
        at = self._offsets[i]
        return bytes(self._buf[at:at + self.ends[i] - self.starts[i]])

    def find_lower(self, needle: bytes, first: int, stop: int) -> list[int]:
        """The frames from ``first`` to ``stop`` (excluded) whose bytes, ASCII letters made lower
        case (``bytes.lower``), hold ``needle``: in order, no frame made (the buffer's part of
        those frames is searched at once, each occurrence placed by its offset, one that runs
        over a frame's end not counted)."""
        offsets, starts, ends = self._offsets, self.starts, self.ends
        n = len(offsets)
        stop = min(stop, n)
        if first >= stop:
            return []
        if not needle:
            return list(range(first, stop))
        lo = offsets[first]
        region = self._buf[lo:offsets[stop] if stop < n else len(self._buf)].lower()
        found: list[int] = []
        size, at = len(needle), region.find(needle)
        while at >= 0:
            i = bisect_right(offsets, lo + at, first, stop) - 1  # (a kept frame has no bytes here)
            frame_end = offsets[i] + ends[i] - starts[i] - lo
            if at + size <= frame_end:
                found.append(i)
                at = region.find(needle, frame_end)
            else:
                at = region.find(needle, at + 1)
        kept = [i for i in self.kept_in(first, stop) if needle in self._kept[i].raw.lower()]
        return sorted(found + kept) if kept and found else found or kept

    def spans(self, first: int, stop: int) -> tuple[bytearray, list[tuple[int, int, int]]]:
        """The buffer, and where the bytes of each frame from ``first`` to ``stop`` (excluded)
        made again from it are there: (frame, start, end), in order (read them, never write)."""
        offsets, starts, ends = self._offsets, self.starts, self.ends
        kept = self._kept
        return self._buf, [(i, offsets[i], offsets[i] + ends[i] - starts[i])
                           for i in range(first, min(stop, len(offsets))) if i not in kept]

    def kept_in(self, first: int, stop: int) -> Sequence[int]:
        """The frames from ``first`` to ``stop`` (excluded) kept as they came, in order."""
        order = self._kept_order
        return order[bisect_left(order, first):bisect_left(order, stop)]

    def _made(self, first: int, stop: int | None = None) -> Iterator[Frame]:
        """Frames ``first`` to ``stop`` (excluded; by default to the last, frames added meanwhile
        included, as a list's iterator does), each made (a search reads every frame: the
        columns are looked up once, not once per frame)."""
        offsets, kept, buf, starts, ends = self._offsets, self._kept, self._buf, self.starts, self.ends
        firsts, lasts, ids, remade = self.first_chunks, self.last_chunks, self._ids, _remade
        i = first - 1
        while True:
            i += 1
            if i >= (len(offsets) if stop is None else stop):
                return
            came = kept.get(i)
            if came is not None:
                yield came
                continue
            at, start, end = offsets[i], starts[i], ends[i]
            frame = remade(i, start, end, bytes(buf[at:at + end - start]), firsts[i], lasts[i],
                           ids[i])
            assert frame is not None  # (it was checked when added)
            yield frame

    def _indexes(self) -> range:
        return range(len(self._offsets))

    def _columns(self) -> FrameColumns:
        return self

    def _one(self, i: int) -> Frame:
        """Frame ``i`` (``0 <= i < len``), from the cache or made and cached."""
        cache = self._cache
        frame = cache.get(i)
        if frame is None:
            frame = next(self._made(i, i + 1))
            if len(cache) >= CACHE:
                del cache[next(iter(cache))]  # (the oldest made)
            cache[i] = frame
        return frame

    def __iter__(self) -> Iterator[Frame]:
        return self._made(0)


class _Slice(_Frames):
    """Frames of a :class:`FrameColumns` at the indexes of a range, each made when read."""

    __slots__ = ("_frames", "_range")

    def __init__(self, frames: FrameColumns, indexes: range) -> None:
        self._frames, self._range = frames, indexes

    def _indexes(self) -> range:
        return self._range

    def _columns(self) -> FrameColumns:
        return self._frames

    def __iter__(self) -> Iterator[Frame]:
        indexes = self._range
        if indexes.step == 1:
            return self._frames._made(indexes.start, indexes.stop)
        return (self._frames._one(i) for i in indexes)
