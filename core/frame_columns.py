"""A timeline's frames as columns over one buffer of their bytes, each made a Frame when asked.

A long session has a frame per SSE event, and a :class:`~.frame.Frame` holds its bytes three
times (the raw block, its decoded lines, its data) beside a tuple per frame and one for its
lines: about 1.5 KB for a 300-byte event, most of a debugger's memory. Nearly every frame a
provider sends has one of the SSE decoder's two common shapes (``data: X``, or ``event: E`` then
``data: X``; LF or CRLF line ends, nothing else), and such a frame is a function of its bytes and its
place (its offsets, its chunks, the last event id in force). So its bytes go into one buffer, its
place into typed arrays, and the frame is made again, equal, when asked (a pane, the JSON output,
a search), by the decoder's own reading of those shapes (:func:`.sse._common_shape`).

A frame is kept this way only if making it again gives it back exactly, checked as it is added;
every other frame (a comment, an id or retry line, a lone CR line end, a byte order mark, a stray
blank line, a cut tail, an overflow, a binary or NDJSON framing) is kept as it came.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import overload

from .frame import Frame
from .sse import _common_shape

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
    shape = _common_shape(text)
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

    __slots__ = ("_at", "_buf", "_cache", "_ids", "_kept", "first_chunks", "last_chunks", "lazy",
                 "ends", "starts")

    def __init__(self, *, lazy: bool = True) -> None:
        self.lazy = lazy
        self.starts: array[int] = array("q")
        self.ends: array[int] = array("q")
        self.first_chunks: array[int] = array("q")
        self.last_chunks: array[int] = array("q")
        self._at: array[int] = array("q")
        """Where the frame's bytes start in the buffer; -1 for a frame kept as it came."""
        self._ids: list[str] = []  # the last event id in force (the decoder's one string, shared)
        self._buf = bytearray()
        self._kept: dict[int, Frame] = {}
        self._cache: dict[int, Frame] = {}

    def append(self, frame: Frame) -> None:
        i = len(self._at)
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
            self._at.append(len(self._buf))
            self._buf += raw
        else:
            self._at.append(-1)
            self._kept[i] = frame

    def raw(self, i: int) -> bytes:
        """Frame ``i``'s bytes (no frame made)."""
        if i < 0:
            i += len(self._at)
        at = self._at[i]
        if at < 0:
            return self._kept[i].raw
        return bytes(self._buf[at:at + self.ends[i] - self.starts[i]])

    def _made(self, first: int, stop: int | None = None) -> Iterator[Frame]:
        """Frames ``first`` to ``stop`` (excluded; by default to the last, frames added meanwhile
        included, as a list's iterator does), each made (a search reads every frame: the
        columns are looked up once, not once per frame)."""
        at_, kept, buf, starts, ends = self._at, self._kept, self._buf, self.starts, self.ends
        firsts, lasts, ids, remade = self.first_chunks, self.last_chunks, self._ids, _remade
        i = first - 1
        while True:
            i += 1
            if i >= (len(at_) if stop is None else stop):
                return
            at = at_[i]
            if at < 0:
                yield kept[i]
                continue
            start, end = starts[i], ends[i]
            frame = remade(i, start, end, bytes(buf[at:at + end - start]), firsts[i], lasts[i],
                           ids[i])
            assert frame is not None  # (it was checked when added)
            yield frame

    def _indexes(self) -> range:
        return range(len(self._at))

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

    __slots__ = ("_at", "_frames")

    def __init__(self, frames: FrameColumns, at: range) -> None:
        self._frames, self._at = frames, at

    def _indexes(self) -> range:
        return self._at

    def _columns(self) -> FrameColumns:
        return self._frames

    def __iter__(self) -> Iterator[Frame]:
        at = self._at
        if at.step == 1:
            return self._frames._made(at.start, at.stop)
        return (self._frames._one(i) for i in at)
