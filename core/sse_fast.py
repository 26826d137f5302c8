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
from collections.abc import Callable
from itertools import accumulate
from operator import length_hint

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
_RUN = 32
"""Reads without a line end per read with one, at least, for a batch to be taken a run at a time
(:meth:`FastPath._small_reads`: a run costs a bisection and a few copies, a read in it almost
nothing): a stream fed a byte or two per read. Also the fewest reads of such a batch."""
_RUN_BYTES = 1 << 16
"""Bytes of a batch, at most, for it to be taken a run at a time (they are joined)."""

Take = Callable[[bytes, int, int, int], bool]
"""The hot path's offer (:meth:`.sse.SSEDecoder.feed_hot`): ``(bytes, start, text_end, frame
index)``, a block's lines being ``bytes[start:text_end]`` (LF-separated, no CR, no byte order
mark); True when it read the block."""

_new = tuple.__new__
"""Builds a :class:`Frame` on the fast path without the named tuple's generated ``__new__`` (a
Python lambda around this call; every field is given, defaults included): half the cost."""


class FastPath(DecoderState):
    """The fast path of :class:`~.sse.SSEDecoder` (no CR in the buffer, no BOM pending)."""

    def _plain_reads(self, batch: list[bytes], at: int, take: Take,
                     deliver: Callable[[Frame], None]) -> int:
        """Feed ``batch[at:]`` while the fast path holds, each read its own read (its start kept,
        its bytes buffered, its line ends drained as they come). Returns the index of the first
        read the fast path did not take (one holding a CR, or any read once a block
        overflowed), ``len(batch)`` when it took them all. Reads that hold no line end are
        taken a run at a time when they are small (:meth:`_small_reads`), else one by one with
        the decoder's counters in locals. Whether they are small is judged once a batch, at its
        first read: a CRLF stream leaves the fast path and comes back at every block, and judging
        the rest of the batch again each time cost more than the runs saved."""
        reads = batch[at:] if at else batch
        if not at and len(reads) >= _RUN:
            lengths = list(map(len, reads))
            size = sum(lengths)
            if size <= _RUN_BYTES:
                joined = b"".join(reads)
                if (joined.count(10) + joined.count(13)) * _RUN < len(reads):
                    return at + self._small_reads(reads, joined, lengths, take, deliver)
        buf = self._buf
        append = self._chunk_starts.append
        max_block = self._max_block
        received = self._received
        # On the fast path the buffer is the stream from the pending block's start to the last
        # byte received: it outgrows the limit when ``received`` passes ``limit``.
        limit = self._block_start + max_block
        left = iter(reads)  # (where it stops: the reads after are length_hint(left))
        for chunk in left:
            if 13 in chunk:  # (a CR: the general path's)
                self._received = received
                return len(batch) - length_hint(left) - 1
            append(received)
            received += len(chunk)
            buf += chunk
            if 10 in chunk:  # (an LF: a block may have ended)
                self._received = received
                self._drain_lf(take, deliver)
                if not self._plain:
                    return len(batch) - length_hint(left)
                limit = self._block_start + max_block
            elif received > limit:
                self._received = received
                deliver(self._overflow())
                return len(batch) - length_hint(left)
        self._received = received
        return len(batch)

    def _small_reads(self, reads: list[bytes], joined: bytes, lengths: list[int], take: Take,
                     deliver: Callable[[Frame], None]) -> int:
        """:meth:`_plain_reads` of ``reads`` (``joined`` their bytes, ``lengths`` theirs), each
        run of reads without a line end taken at once: their starts (a running sum of their
        lengths) and their bytes are what the reads one by one would have added, and the read
        that takes the block past the limit is found by bisection over their ends. A read that
        holds a line end is fed on its own. tests/test_sse_feed_hot.py holds this equal to
        :meth:`~.sse.SSEDecoder.feed_hot` read by read."""
        base = self._received
        ends = list(accumulate(lengths, initial=base))  # read k is ends[k]:ends[k + 1]
        starts, buf, view = self._chunk_starts, self._buf, memoryview(joined)
        count = len(reads)
        cr, lf = joined.find(b"\r"), joined.find(b"\n")
        k = 0
        while True:
            if cr < 0 and lf < 0:
                line_end = count
            else:  # the read that holds the next line-end byte (an empty read holds none)
                at = lf if cr < 0 else cr if lf < 0 else min(cr, lf)
                line_end = bisect_right(ends, base + at, k) - 1
            if line_end > k:  # reads k .. line_end - 1 hold no line end
                end = ends[line_end]
                limit = self._block_start + self._max_block
                if end > limit:  # the first read whose end passes it overflows the block
                    over = bisect_right(ends, limit, k + 1)
                    starts.extend(ends[k:over])
                    buf += view[ends[k] - base:ends[over] - base]
                    self._received = ends[over]
                    deliver(self._overflow())
                    return over
                starts.extend(ends[k:line_end])
                buf += view[ends[k] - base:end - base]
                self._received = end
                k = line_end
            if k == count:
                return count
            chunk = reads[k]
            if 13 in chunk:
                return k
            starts.append(self._received)  # (an LF read, fed as _plain_reads feeds one)
            self._received += len(chunk)
            buf += chunk
            self._drain_lf(take, deliver)
            if not self._plain:
                return k + 1
            k += 1
            after = ends[k] - base
            if 0 <= lf < after:
                lf = joined.find(b"\n", after)
            # (cr needs no update: every read before the one that holds it is CR-free, and
            # that read ends the run)

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
