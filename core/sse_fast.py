"""The SSE decoder's fast path: blocks cut at ``\\n\\n`` with ``bytes.find``, where they lie.

While no byte order mark is pending and the buffered bytes hold no CR, a block ends exactly at
the next ``\\n\\n`` (or is one stray ``\\n``). :meth:`FastPath._drain_lf` cuts every such block
of one read with one ``find`` each and compacts the buffer once; :meth:`FastPath._plain_run`
does the same for a run of reads at once (:meth:`.sse.SSEDecoder.feed_hot_each`). With a
taker (:meth:`.sse.SSEDecoder.feed_hot`) each block is first offered to the engine's hot path
as its span in the bytes, and a block taken is never made a frame. The general path
(:mod:`.sse`) produces the same frames, which the property tests check chunking by chunking.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from typing import Protocol

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

class Taker(Protocol):
    """The hot path (:meth:`.sse.SSEDecoder.feed_hot`), offered each block before it is made a
    frame."""

    run_end: int
    """Where the last block ends (past its blank line) when :meth:`take` read more than one."""

    def take(self, data: bytes, start: int, text_end: int, index: int) -> int:
        """The block ``data[start:text_end]`` (LF-separated lines, no CR, no byte order mark)
        as frame ``index``: how many blocks it read from there, in order, each its frame (0:
        none; past the first, only whole blocks shorter than the decoder's limit)."""
        ...
Emit = Callable[[Frame], None]

_new = tuple.__new__
"""Builds a :class:`Frame` on the fast path without the named tuple's generated ``__new__`` (a
Python lambda around this call; every field is given, defaults included): half the cost."""


class FastPath(DecoderState):
    """The fast path of :class:`~.sse.SSEDecoder` (no CR in the buffer, no BOM pending)."""

    def _plain_run(self, batch: list[bytes], ends: list[int], lo: int, at: int, hi: int,
                   joined: bytes, hot: Taker, deliver: Emit) -> int:
        """Feed reads ``batch[at:hi]`` as if one by one while the fast path holds, their
        blocks cut at once: ``joined`` is ``b"".join(batch[lo:hi])``, ``ends`` the stream offsets
        where the batch's reads start (read k is ``ends[k]:ends[k + 1]``: the running sum of
        their lengths from the bytes received before the batch, so the chunk starts of the reads
        fed are a copy of them), ``batch[at]`` holds no CR. Returns the index of the first read
        not fed: the first one holding a CR, the one after a read that took a block past the
        limit, else ``hi``.

        Fed one by one, the reads would cut the same blocks in the same order (the blocks are
        the bytes' alone on the fast path), each frame naming the chunks of its first and last
        byte; what the order of reads decides is found from ``ends``: a block overflows at the
        first read whose end leaves more than the limit pending, and no block after it is
        cut. tests/test_sse_feed_hot.py holds this equal to :meth:`~.sse.SSEDecoder.feed_hot`
        read by read."""
        base = ends[lo]
        first = ends[at] - base  # (read ``at`` in joined)
        cr = joined.find(b"\r", first)
        stop = hi if cr < 0 else bisect_right(ends, base + cr, at) - 1  # (a read holding one)
        last = ends[stop] - base
        buf = self._buf
        starts = self._chunk_starts
        starts.fromlist(ends[at:stop])  # (ends[at] is self._received: C speed, no Python call)
        offset = self._block_start
        max_block = self._max_block
        start = 0  # (where the pending block starts in data: what is cut goes before it)
        take = hot.take
        # A block ends in these reads if a blank line does or one starts the pending block
        # (the buffer holds none): else their bytes are appended and the buffer is not
        # copied, so a long block costs linear time however it is read.
        cut = joined.find(b"\n\n", first, last) >= 0 or (
            buf[-1] == 0x0A and joined.startswith(b"\n", first, last) or buf[0] == 0x0A
            if buf else joined.startswith(b"\n", first, last))
        if cut:
            if buf:
                data = b"".join((buf, memoryview(joined)[first:last]))
                buf.clear()  # (its bytes are in data: a long block is not held twice while cut)
            else:
                data = joined if first == 0 and last == len(joined) else joined[first:last]
            size = len(data)
            pos = data.find(b"\n\n", self._scan)
            while start < size:
                if data[start] == 0x0A:  # a stray blank line is a block of its own
                    chunk = self._chunk_of(offset + start)
                    deliver(self._frame(b"\n", ("",), NO_FIELDS, offset + start,
                                        offset + start + 1, chunk, chunk, terminated=True))
                    start += 1
                    continue
                if pos < start:
                    pos = data.find(b"\n\n", start)
                if pos < 0 or pos - start >= max_block:
                    break
                read = take(data, start, pos, self._frames)
                if read:
                    self._frames += read  # read where they lie: frames never materialized
                    start = pos + 2 if read == 1 else hot.run_end
                    continue
                self._cut(data, start, pos, offset, self._chunk_of(offset + start),
                          self._chunk_of(offset + pos + 1), deliver)
                start = pos + 2
        else:
            buf += memoryview(joined)[first:last]
        pending = offset + start  # the stream offset of the pending block
        over = pending + max_block  # (a read ending past it overflows)
        if ends[stop] > over:
            fed = bisect_right(ends, over, at + 1)  # (the read that overflows, plus one)
            del starts[len(starts) - stop + fed:]
            stop = fed
        kept = ends[stop] - pending  # (the pending block's bytes received)
        if cut:
            buf.clear()
            buf += memoryview(data)[start:start + kept]
        else:
            del buf[kept:]
        self._received = ends[stop]
        self._block_start = pending
        self._scan = max(len(buf) - 1, 0)
        if len(buf) > max_block:
            deliver(self._overflow())
        if len(self._chunk_starts) > _KEEP_STARTS:
            self._let_go()
        return stop

    def _drain_lf(self, hot: Taker | None = None, deliver: Emit | None = None) -> list[Frame]:
        """Cut every block that ends in the buffer, where a block ends at ``\\n\\n`` (or is one
        stray ``\\n``). One copy of the buffer, one ``find`` per block, one compaction per read.
        With ``hot`` and ``deliver`` (:meth:`.sse.SSEDecoder.feed_hot`), each block is offered
        to ``hot`` first, and the frames go to ``deliver`` as they are made (so in stream
        order with the blocks ``hot`` read), not into the list returned."""
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
                if hot is not None and (read := hot.take(data, start, text_end, self._frames)):
                    self._frames += read  # read where they lie: frames never materialized
                    if read > 1:
                        end = hot.run_end
                else:
                    self._cut(data, start, text_end, offset, first_chunk, this_chunk, emit)
            first_chunk = this_chunk
            start = end
        if size > _KEEP:
            buf += memoryview(data)[start:]
        else:
            del buf[:start]
        self._block_start = offset + start
        if len(self._chunk_starts) > _KEEP_STARTS:
            self._let_go()
        self._scan = max(len(buf) - 1, 0)
        if buf and start:
            # What is left starts after a block end found in this read, so inside this read:
            # the next call knows its first chunk without a search.
            self._start_chunk = (self._block_start, this_chunk)
        if len(buf) > self._max_block:
            emit(self._overflow())
        return frames

    def _cut(self, data: bytes, start: int, text_end: int, offset: int, first_chunk: int,
             last_chunk: int, emit: Emit) -> None:
        """The block ``data[start:text_end + 2]`` (at stream offset ``offset + start``) as a
        frame, to ``emit``."""
        end = text_end + 2
        if text_end - start > _BIG:  # (decoded line by line: not held whole as well)
            text, shape = None, big_shape(data, start, text_end)
        else:
            text = data[start:text_end].decode("utf-8", "replace")
            shape = common_shape(text)
        if shape is None:
            if text is None:
                text = data[start:text_end].decode("utf-8", "replace")
            lines = (*text.split("\n"), "")
            emit(self._frame(data[start:end], lines, self._fields(lines), offset + start,
                             offset + end, first_chunk, last_chunk, terminated=True))
        else:
            lines, event, payload = shape
            emit(_new(Frame, (self._frames, offset + start, offset + end, data[start:end], lines,
                              first_chunk, last_chunk, event, payload, self._last_event_id, None,
                              (), True, True, False, (), None)))
            self._frames += 1

    def _let_go(self) -> None:
        """Only the pending block's chunks are ever looked up: the starts of those before it
        are let go (past :data:`_KEEP_STARTS`: a long session has a start per read, 8 bytes
        each)."""
        starts = self._chunk_starts
        drop = bisect_right(starts, self._block_start) - 1
        if drop > 0:
            del starts[:drop]
            self._chunk_base += drop
