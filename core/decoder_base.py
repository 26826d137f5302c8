"""What the length- and line-framed decoders share (:mod:`.aws_eventstream`, :mod:`.ndjson`):
the :class:`~.framing.Decoder` contract's bookkeeping. Reads are counted and numbered, a
frame's chunk numbers are those of the reads holding its first and last byte (a binary search,
never a rescan), and a decoder that stopped framing (a fault or the size limit) counts later
bytes without keeping them. A framing writes only :meth:`FramedDecoder._frames_of` and
:meth:`close`."""

from __future__ import annotations

from bisect import bisect_right

from .errors import DecoderClosed
from .frame import Frame
from .limits import DEFAULT_LIMITS


class FramedDecoder:
    """The bookkeeping of one stream's decoder; subclasses cut the frames."""

    def __init__(self, max_block_bytes: int = DEFAULT_LIMITS.max_block_bytes) -> None:
        self._max_block = max_block_bytes
        self._chunk_starts: list[int] = []
        self._received = 0
        self._frames = 0
        self._closed = False
        self._stopped = False
        """Framing stopped (a fault or the size limit): later bytes are counted only."""
        self._rest = bytearray()
        """After a fault that stops framing, the bytes past it (up to the block limit): nothing
        received is dropped, :meth:`_rest_frame` shows them at the end of the stream."""
        self._rest_start: int | None = None

    @property
    def bytes_received(self) -> int:
        return self._received

    @property
    def frames_emitted(self) -> int:
        return self._frames

    @property
    def pending(self) -> int:
        """Bytes received that belong to no completed frame yet."""
        return self._pending() + len(self._rest)

    def _pending(self) -> int:
        return 0

    def feed(self, chunk: bytes) -> list[Frame]:
        """One network read: the frames it completed."""
        if self._closed:
            raise DecoderClosed("feed() after close()")
        self._chunk_starts.append(self._received)
        return self._take(chunk)

    def feed_more(self, piece: bytes) -> list[Frame]:
        """The next piece of the read fed last (same chunk number)."""
        if self._closed:
            raise DecoderClosed("feed_more() after close()")
        return self._take(piece)

    def close(self) -> list[Frame]:
        """End of stream: what is pending, as the framing says."""
        raise NotImplementedError

    def _take(self, data: bytes) -> list[Frame]:
        self._received += len(data)
        if not self._stopped:
            return self._frames_of(data)
        if self._rest_start is not None:
            self._rest += data[:max(self._max_block - len(self._rest), 0)]
        return []

    def _keep_rest(self, start: int, data: bytes | bytearray) -> None:
        """Framing stopped at a fault: keep the bytes from ``start`` on for :meth:`_rest_frame`."""
        self._rest_start = start
        self._rest += data[:self._max_block]

    def _rest_frame(self) -> list[Frame]:
        """The bytes past a fault that stopped framing, as one frame that does not dispatch."""
        if self._rest_start is None or not self._rest:
            return []
        raw = bytes(self._rest)
        self._rest.clear()
        return [self._new_frame(self._rest_start, raw,
                                (f"[{len(raw)} bytes after framing stopped, not framed]",),
                                event=None, data="", dispatch=False, terminated=False)]

    def _frames_of(self, data: bytes) -> list[Frame]:
        """The frames these bytes complete."""
        raise NotImplementedError

    def _new_frame(self, start: int, raw: bytes, lines: tuple[str, ...], *, event: str | None,
                   data: str, dispatch: bool, terminated: bool, overflow: bool = False,
                   headers: tuple[tuple[str, str], ...] = (),
                   fault: tuple[str, str] | None = None) -> Frame:
        """The next frame: ``raw`` at stream offset ``start`` (no SSE id, retry or comments)."""
        end = start + len(raw)
        frame = Frame(self._frames, start, end, raw, lines, self._chunk_of(start),
                      self._chunk_of(end - 1), event, data, "", None, (), dispatch, terminated,
                      overflow, headers, fault)
        self._frames += 1
        return frame

    def _chunk_of(self, offset: int) -> int:
        return max(bisect_right(self._chunk_starts, offset) - 1, 0)
