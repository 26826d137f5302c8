"""The state an SSE decoder keeps between reads, and how a frame is made from it.

:class:`DecoderState` is the base of :class:`~.sse.SSEDecoder`: its buffer, the stream offset
of the buffer's first byte, the chunk starts (a frame names the chunks of its first and last
byte), the last event id, and which path (:mod:`.sse_fast` or the general one in :mod:`.sse`)
the next read may take. Both paths make their frames here.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Sequence

from .frame import Frame
from .limits import DEFAULT_LIMITS
from .sse_fields import NO_FIELDS, Fields, read_fields

_BOM = "\ufeff"


class DecoderState:
    """An SSE decoder's state between reads (see :class:`~.sse.SSEDecoder`)."""

    def __init__(self, max_block_bytes: int = DEFAULT_LIMITS.max_block_bytes) -> None:
        self._max_block = max_block_bytes
        self._overflowed = False
        self._buf = bytearray()  # bytes of the current, unfinished block
        self._block_start = 0  # stream offset of _buf[0]
        self._scan = 0  # index in _buf where the block-end search resumes
        self._cr_in_buf = False  # whether _buf may hold a CR (then only the general path applies)
        # (machine words, not int objects: a stream read a byte at a time has a start per byte)
        self._chunk_starts: array[int] = array("q")
        self._chunk_base = 0
        """The number of the chunk whose start is ``_chunk_starts[0]``."""
        self._received = 0
        self._frames = 0
        self._closed = False
        self._first_line = True  # a byte order mark may still come (kept out of the text)
        self._last_event_id = ""
        self._plain = False
        """No byte order mark pending, no CR buffered, not overflowed, not closed: the fast path."""
        self._start_chunk = (-1, 0)
        """(offset, chunk number) of a pending block's first byte, when the fast path knows it."""

    @property
    def bytes_received(self) -> int:
        return self._received

    @property
    def frames_emitted(self) -> int:
        return self._frames

    @property
    def pending(self) -> int:
        """Bytes received that belong to no completed frame yet."""
        return len(self._buf)

    def _overflow(self) -> Frame:
        """The block outgrew the limit: emit what is buffered as a non-dispatching frame and
        stop framing, so memory stays bounded whatever the stream sends."""
        lines = (f"[callscope stopped framing: block larger than {self._max_block} bytes]",)
        frame = self._emit(len(self._buf), lines, NO_FIELDS, terminated=False)
        self._overflowed = True
        self._plain = False
        return frame._replace(overflow=True)

    def _decode(self, raw: bytes | bytearray) -> str:
        text = raw.decode("utf-8", "replace")
        if self._first_line:
            self._first_line = False
            if text.startswith(_BOM):
                text = text[1:]
        return text

    def _fields(self, lines: Sequence[str]) -> Fields:
        """Read a block's fields; its last id persists on the decoder."""
        fields = read_fields(lines)
        if fields.last_id is not None:
            self._last_event_id = fields.last_id
        return fields

    def _emit(self, length: int, lines: tuple[str, ...], fields: Fields, *,
              terminated: bool) -> Frame:
        """The first ``length`` bytes of the buffer as a frame, cut off the buffer."""
        start = self._block_start
        end = start + length
        frame = self._frame(bytes(self._buf[:length]), lines, fields, start, end,
                            self._chunk_of(start), self._chunk_of(end - 1), terminated=terminated)
        del self._buf[:length]
        self._block_start = end
        self._scan = 0
        return frame

    def _frame(self, raw: bytes, lines: tuple[str, ...], fields: Fields, start: int, end: int,
               first_chunk: int, last_chunk: int, *, terminated: bool) -> Frame:
        data = fields.data
        frame = Frame(self._frames, start, end, raw, lines, first_chunk, last_chunk, fields.event,
                      data[0] if len(data) == 1 else "\n".join(data), self._last_event_id,
                      fields.retry, fields.comments, terminated and bool(data), terminated)
        self._frames += 1
        return frame

    def _chunk_of(self, offset: int) -> int:
        """The number of the chunk that holds stream offset ``offset``."""
        return self._chunk_base + max(bisect_right(self._chunk_starts, offset) - 1, 0)
