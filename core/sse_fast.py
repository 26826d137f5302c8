"""The SSE decoder's fast path: blocks cut at ``\\n\\n`` with ``bytes.find``, where they lie.

While no byte order mark is pending and the buffered bytes hold no CR, a block ends exactly at
the next ``\\n\\n`` (or is one stray ``\\n``). :meth:`FastPath._drain_lf` cuts every such block
with one ``find`` each and compacts the buffer once per read; with a ``take``
(:meth:`.sse.SSEDecoder.feed_hot`) it first offers each block to the engine's hot path as its
span in the bytes, and a block taken is never made a frame. The general path (:mod:`.sse`)
produces the same frames, which the property tests check chunking by chunking.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterator

from .frame import Frame
from .sse_fields import NO_FIELDS, big_shape, common_shape
from .sse_state import DecoderState

_KEEP = 1 << 16
"""Bytes of buffer past which the fast path cuts the blocks from a copy with the buffer emptied
(a big block's bytes held once), then puts back what is left (its capacity let go)."""
_BIG = 1 << 16
"""Bytes of a block past which the fast path decodes it line by line (:func:`.big_shape`)."""
_KEEP_STARTS = 4096
"""Chunk starts held before those wholly before the pending block are let go."""

Take = Callable[[bytes, int, int, int], bool]
"""The hot path's offer (:meth:`.sse.SSEDecoder.feed_hot`): ``(bytes, start, text_end, frame
index)``, a block's lines being ``bytes[start:text_end]`` (LF-separated, no CR, no byte order
mark); True when it read the block."""

_new = tuple.__new__
"""Builds a :class:`Frame` on the fast path without the named tuple's generated ``__new__`` (a
Python lambda around this call; every field is given, defaults included): half the cost."""


class FastPath(DecoderState):
    """The fast path of :class:`~.sse.SSEDecoder` (no CR in the buffer, no BOM pending)."""

    def _plain_run(self, reads: Iterator[bytes], take: Take,
                   deliver: Callable[[Frame], None]) -> bytes | None:
        """Feed reads from ``reads`` while the fast path holds: each is its own read (its start
        kept, its bytes buffered, its line ends drained as they come), with the decoder's
        counters in locals. Returns the first read the fast path cannot take (one holding a
        CR, or any read once a block overflowed), None when ``reads`` ran out."""
        buf = self._buf
        append = self._chunk_starts.append
        max_block = self._max_block
        received = self._received
        # On the fast path the buffer is the stream from the pending block's start to the last
        # byte received: it outgrows the limit when ``received`` passes ``limit``.
        limit = self._block_start + max_block
        for chunk in reads:
            if 13 in chunk:  # (a CR: the general path's)
                self._received = received
                return chunk
            append(received)
            received += len(chunk)
            buf += chunk
            if 10 in chunk:  # (an LF: a block may have ended)
                self._received = received
                self._drain_lf(take, deliver)
                if not self._plain:
                    return next(reads, None)
                limit = self._block_start + max_block
            elif received > limit:
                self._received = received
                deliver(self._overflow())
                return next(reads, None)
        self._received = received
        return None

    def _drain_lf(self, take: Take | None = None,
                  deliver: Callable[[Frame], None] | None = None) -> list[Frame]:
        """Cut every block that ends in the buffer, where a block ends at ``\\n\\n`` (or is one
        stray ``\\n``). One copy of the buffer, one ``find`` per block, one compaction per read.
        With ``take`` and ``deliver`` (:meth:`.sse.SSEDecoder.feed_hot`), each block is offered
        to ``take`` first, and the frames go to ``deliver`` as they are made (so in stream
        order with the blocks ``take`` read), not into the list returned."""
        buf = self._buf
        pos = buf.find(b"\n\n", self._scan)
        frames: list[Frame] = []
        emit = frames.append if deliver is None else deliver
        if pos < 0 and buf[:1] != b"\n":
            self._scan = max(len(buf) - 1, 0)  # a trailing LF may pair with the next read
            if len(buf) > self._max_block:
                emit(self._overflow())
            return frames
        data = bytes(buf)
        offset, start, size = self._block_start, 0, len(data)
        if size > _KEEP:
            buf.clear()  # (a big block's bytes are held once, in data; the rest is put back)
        this_chunk = self._chunk_base + len(self._chunk_starts) - 1
        at, chunk = self._start_chunk
        first_chunk = chunk if at == offset else self._chunk_of(offset)
        text_end = pos  # the first block's end, already found
        while start < size:
            if data[start] == 0x0A:  # a stray blank line is a block of its own
                end = start + 1
                emit(self._frame(b"\n", ("",), NO_FIELDS, offset + start, offset + end,
                                 first_chunk, this_chunk, terminated=True))
            else:
                if text_end < start:
                    text_end = data.find(b"\n\n", start)
                if text_end < 0 or text_end - start >= self._max_block:
                    break
                end = text_end + 2
                if take is not None and take(data, start, text_end, self._frames):
                    self._frames += 1  # read where it lies: a frame never materialized
                    first_chunk = this_chunk
                    start = end
                    continue
                if text_end - start > _BIG:  # (decoded line by line: not held whole as well)
                    text, shape = None, big_shape(data, start, text_end)
                else:
                    text = data[start:text_end].decode("utf-8", "replace")
                    shape = common_shape(text)
                if shape is None:
                    if text is None:
                        text = data[start:text_end].decode("utf-8", "replace")
                    lines = (*text.split("\n"), "")
                    emit(self._frame(data[start:end], lines, self._fields(lines),
                                     offset + start, offset + end, first_chunk, this_chunk,
                                     terminated=True))
                else:
                    lines, event, payload = shape
                    emit(_new(Frame, (self._frames, offset + start, offset + end,
                                      data[start:end], lines, first_chunk, this_chunk, event,
                                      payload, self._last_event_id, None, (), True, True, False,
                                      (), None)))
                    self._frames += 1
            first_chunk = this_chunk
            start = end
        if size > _KEEP:
            buf += memoryview(data)[start:]
        else:
            del buf[:start]
        self._block_start = offset + start
        starts = self._chunk_starts
        if len(starts) > _KEEP_STARTS:
            # Only the pending block's chunks are ever looked up: the starts of those before
            # it are let go (a long session has a start per read, 8 bytes each).
            drop = bisect_right(starts, self._block_start) - 1
            if drop > 0:
                del starts[:drop]
                self._chunk_base += drop
        self._scan = max(len(buf) - 1, 0)
        if buf and start:
            # What is left starts after a block end found in this read, so inside this read:
            # the next call knows its first chunk without a search.
            self._start_chunk = (self._block_start, this_chunk)
        if len(buf) > self._max_block:
            emit(self._overflow())
        return frames
