"""Byte-exact, incremental Server-Sent Events framing (sans-IO).

Feed byte chunks of any size to :class:`SSEDecoder`; it returns the :class:`~.frame.Frame` records
completed so far, and :meth:`SSEDecoder.close` flushes at the end of the stream. The reading
follows the WHATWG event-stream interpretation (HTML Living Standard, "Server-sent events",
§9.2.6), and a frame keeps everything a debugger needs to show the bytes as they arrived.

Three implementation choices matter:

* **Never rescan.** Bytes wait in one buffer until their block ends; the line-end search
  resumes where it stopped (as h11's receive buffer does), so feeding a 1 MiB line one byte at
  a time costs linear time.
* **Decode per block.** CR and LF are ASCII and never occur inside a UTF-8 multi-byte sequence,
  so decoding each complete block on its own gives exactly the text of decoding the whole
  stream, including characters split across chunks and U+FFFD for invalid bytes.
* **A fast path for what providers send.** Once the first bytes are known not to be a byte
  order mark and while the buffered bytes hold no CR, a block ends exactly at the next
  ``\\n\\n`` (:mod:`.sse_fast`). Everything else (CR line ends, a BOM, the end of the stream, a
  block past the size limit) takes the general path, here; both produce the same frames, which
  the property tests check chunking by chunking.

A frame is any block of lines ended by a blank line (or by the end of the stream), including
blocks that the browser algorithm would not dispatch: comment-only blocks, blocks without
``data``, a stray blank line, and the unterminated tail of a cut stream.

The modules: this one (the decoder's reads and its general path), :mod:`.sse_state` (the state
kept between reads, frames made from it), :mod:`.sse_fast` (the fast path) and
:mod:`.sse_fields` (a block's fields and common shapes).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable
from itertools import accumulate, islice

from .errors import DecoderClosed
from .frame import Frame
from .sse_fast import FastPath, Taker
from .sse_fields import SPLIT_LINES

# The end of a block: the line end of a non-empty line, then an empty line's line end. A lone
# CR followed by LF is never the first line end (the pair is one CRLF).
_LINE_END = re.compile(rb"(?:\r\n|\r(?!\n)|\n)(?:\r\n|\r|\n)")
_EOL_BYTES = frozenset(b"\r\n")
# Byte membership is tested with ints: ``10 in chunk`` is a memchr, while ``b"\n" in chunk``
# first takes a buffer of the needle, about ten times the cost, and the fast path pays it per read.
_CR = 0x0D
_LF = 0x0A
_BOM_BYTES = b"\xef\xbb\xbf"
_BATCH = 1024
"""Reads :meth:`SSEDecoder.feed_hot_each` takes from its iterable at a time."""
_JOIN = 1 << 20
"""Bytes of reads :meth:`SSEDecoder.feed_hot_each` joins at a time (at least one read)."""


class SSEDecoder(FastPath):
    """Incremental event-stream decoder: ``feed(bytes) -> [Frame]``, ``close() -> [Frame]``."""

    def feed(self, chunk: bytes) -> list[Frame]:
        """Add one network chunk; return the frames it completed."""
        if self._plain and _CR not in chunk:
            # The common case, with as little work per read as possible (check replays a
            # session one byte per read).
            self._chunk_starts.append(self._received)
            self._received += len(chunk)
            buf = self._buf
            buf += chunk
            if _LF in chunk:
                return self._drain_lf()
            # No line end arrived (a read inside a long line): no block can have ended.
            return [] if len(buf) <= self._max_block else [self._overflow()]
        if self._closed:
            raise DecoderClosed("feed() after close()")
        self._chunk_starts.append(self._received)
        return self._take(chunk)

    def feed_hot(self, chunk: bytes, hot: Taker, deliver: Callable[[Frame], None], *,
                 more: bool = False) -> None:
        """:meth:`feed` (:meth:`feed_more` with ``more``) for the engine's hot path
        (:mod:`.hot_path`), one call per read: each block the fast path cuts is first offered
        to ``hot`` as its span in the bytes, before any :class:`Frame` is made; a block
        ``hot`` reads counts as a frame and is never made one. Every other frame goes to
        ``deliver``, all in stream order."""
        if self._plain and _CR not in chunk:
            if not more:
                self._chunk_starts.append(self._received)
            self._received += len(chunk)
            buf = self._buf
            buf += chunk
            if _LF in chunk:
                self._drain_lf(hot, deliver)
            elif len(buf) > self._max_block:
                deliver(self._overflow())
            return
        if self._first_line and len(self._buf) < len(_BOM_BYTES) < len(chunk) and _CR not in chunk:
            # Whether a byte order mark opens the stream is known from its first three bytes;
            # the rest of the read (a raw capture is one read) may then take the fast path.
            cut = len(_BOM_BYTES) - len(self._buf)
            for frame in self.feed_more(chunk[:cut]) if more else self.feed(chunk[:cut]):
                deliver(frame)
            self.feed_hot(chunk[cut:], hot, deliver, more=True)
            return
        for frame in self.feed_more(chunk) if more else self.feed(chunk):
            deliver(frame)

    def feed_hot_each(self, reads: Iterable[bytes], hot: Taker,
                      deliver: Callable[[Frame], None], *, more: bool = False) -> int:
        """:meth:`feed_hot` each read in turn (with ``more``, the first one continues the
        chunk fed last), for a caller that reads only what ``hot`` and ``deliver`` are handed
        (``check`` replays every session a byte per read): while the fast path holds, the
        blocks of a run of reads are cut at once (:meth:`~.sse_fast.FastPath._plain_run`), one
        copy and one compaction a run, not a call each. The reads are taken from ``reads``
        :data:`_BATCH` at a time, before any of them is fed, and joined :data:`_JOIN` bytes at a
        time. Returns how many reads it fed."""
        reads = iter(reads)
        before = self._chunk_base + len(self._chunk_starts)  # (a chunk start per read but one)
        if more:
            first = next(reads, None)
            if first is None:
                return 0
            self.feed_hot(first, hot, deliver, more=True)
            before -= 1  # (it continued the last chunk: no start of its own)
        while batch := list(islice(reads, _BATCH)):
            # (stream offsets: read k is ends[k]:ends[k + 1], so the chunk starts are a slice)
            ends = list(accumulate(map(len, batch), initial=self._received))
            at, lo, hi, joined = 0, 0, 0, b""
            while at < len(batch):
                if self._plain and _CR not in batch[at]:
                    if at >= hi:  # (the reads from here joined, up to _JOIN bytes of them)
                        lo, hi = at, max(bisect_right(ends, ends[at] + _JOIN, at) - 1, at + 1)
                        joined = b"".join(batch[lo:hi])
                    at = self._plain_run(batch, ends, lo, at, hi, joined, hot, deliver)
                    continue
                self.feed_hot(batch[at], hot, deliver)  # (the general path's, or overflowed)
                at += 1
        return self._chunk_base + len(self._chunk_starts) - before

    def feed_more(self, piece: bytes) -> list[Frame]:
        """More bytes of the chunk fed last, as if they had come with it (same chunk number).
        A caller framing one huge read (a raw capture is a single read) feeds it a piece at a
        time to get its first frames before the rest is framed; the frames are those of
        :meth:`feed` with the whole chunk, except that a block past the size limit overflows
        with a buffer bounded by the piece size."""
        if self._closed:
            raise DecoderClosed("feed_more() after close()")
        return self._take(piece)

    def _take(self, data: bytes) -> list[Frame]:
        self._received += len(data)
        if self._overflowed:
            return []
        self._buf += data
        return self._feed_general(data)

    def close(self) -> list[Frame]:
        """End of stream: a trailing CR ends its line; an unfinished block becomes a frame that
        does not dispatch."""
        if self._closed:
            return []
        self._closed = True
        self._plain = False
        if self._overflowed:
            return []
        frames = self._drain(final=True)
        if len(self._buf) > self._max_block:
            frames.append(self._overflow())
        elif self._buf:
            frames.append(self._block(len(self._buf), len(self._buf), terminated=False))
        return frames

    # -- the general path ---------------------------------------------------------------------

    def _feed_general(self, chunk: bytes) -> list[Frame]:
        buf = self._buf
        if self._first_line and len(buf) >= 3 and not buf.startswith(_BOM_BYTES):
            # No byte order mark: the first block reads like any other, so the fast path may
            # take it (a byte-by-byte replay used to run the general path for its first ~1 KB).
            self._first_line = False
            self._plain = not (self._cr_in_buf or self._overflowed or _CR in chunk)
        if _CR in chunk:
            self._cr_in_buf = True
            self._plain = False
        elif _LF not in chunk and not self._first_line and buf[-len(chunk) - 1:-len(chunk)] != b"\r":
            return [self._overflow()] if len(buf) > self._max_block else []
        emitted = self._frames
        frames = self._drain(final=False)
        if self._frames != emitted:
            # What is left arrived after the last block's end, all in this chunk: cheap to check.
            self._cr_in_buf = _CR in buf
            self._plain = not (self._cr_in_buf or self._first_line or self._overflowed)
        if len(buf) > self._max_block:
            frames.append(self._overflow())
        return frames

    def _drain(self, *, final: bool) -> list[Frame]:
        """Cut every complete block off the buffer: one regex search per block, resumed where
        the previous search stopped, and one decode per block."""
        frames: list[Frame] = []
        buf = self._buf
        while buf:
            if not self._first_line and not self._cr_in_buf:
                frames += self._drain_lf()  # e.g. a whole LF-only stream in one read
                return frames
            if self._first_line and not self._bom_checked(final):
                return frames  # a BOM may still be arriving: wait for its bytes
            head = 3 if self._first_line and buf.startswith(_BOM_BYTES) else 0
            if len(buf) > head and buf[head] in _EOL_BYTES:
                # The block is one empty line (after a stray blank line, or a BOM).
                if buf[head] == _CR and len(buf) == head + 1 and not final:
                    return frames  # wait: an LF may complete this line end
                after = head + (2 if buf[head:head + 2] == b"\r\n" else 1)
                frames.append(self._block(head, after, terminated=True))
                continue
            match = _blank_line(buf, self._scan)
            if match is None or match.start() >= self._max_block:
                # Resume after the bytes already scanned, keeping trailing line-end bytes
                # that may pair with the next chunk (h11's receive buffer does the same).
                tail = buf[-3:]
                trailing = len(tail) - len(tail.rstrip(b"\r\n"))
                self._scan = len(buf) - trailing if match is None else match.start()
                return frames
            if match.end() == len(buf) and buf[-1] == _CR and not final:
                # The blank line ends with a CR that may be the first half of a CRLF: wait,
                # so frames do not depend on the chunking.
                self._scan = match.start()
                return frames
            frames.append(self._block(match.start(), match.end(), terminated=True))
        return frames

    def _block(self, text_end: int, length: int, *, terminated: bool) -> Frame:
        """Emit the first ``length`` bytes of the buffer as a frame; ``text_end`` is where its
        lines stop (before the last line end, or the buffer end for an unterminated tail)."""
        pieces = SPLIT_LINES.split(self._decode(self._buf[:text_end]))
        if not terminated:
            # At the end of the stream only complete lines count; the rest is shown, not read.
            complete, partial = pieces[:-1], pieces[-1]
            fields = self._fields(complete)
            lines = (*complete, partial) if partial else tuple(complete)
        else:
            fields = self._fields(pieces)
            lines = (*pieces, "") if text_end < length and pieces != [""] else tuple(pieces)
        return self._emit(length, lines, fields, terminated=terminated)

    def _bom_checked(self, final: bool) -> bool:
        """True once the first bytes can be told apart from a byte order mark."""
        buf = self._buf
        if len(buf) >= 3 or final or not _BOM_BYTES.startswith(bytes(buf)):
            return True
        return False


def _blank_line(buf: bytes | bytearray, scan: int) -> re.Match[bytes] | None:
    """``_LINE_END.search(buf, scan)``, tried only where a match can start (a CR or an LF):
    a regex search tries every byte of a long line, ``bytes.find`` skips to the next line end
    at C speed (a 1 MB CRLF line: 0.5 ms instead of 5). Each line-end byte is found once."""
    find = buf.find
    cr, lf = find(b"\r", scan), find(b"\n", scan)
    while cr >= 0 or lf >= 0:
        at = lf if cr < 0 else cr if lf < 0 else min(cr, lf)
        match = _LINE_END.match(buf, at)
        if match is not None:
            return match
        if at == cr:
            cr = find(b"\r", at + 1)
        else:
            lf = find(b"\n", at + 1)
    return None


def decode_all(data: bytes) -> list[Frame]:
    """Frames of a whole stream delivered as one chunk."""
    decoder = SSEDecoder()
    return decoder.feed(data) + decoder.close()


__all__ = ["SSEDecoder", "Taker", "decode_all"]
