"""Byte-exact, incremental Server-Sent Events framing (sans-IO).

Feed byte chunks of any size to :class:`SSEDecoder`; it returns the :class:`~.frame.Frame` records
completed so far, and :meth:`SSEDecoder.close` flushes at the end of the stream. The reading
follows the WHATWG event-stream interpretation (HTML Living Standard, "Server-sent events",
§9.2.6), and a frame keeps everything a debugger needs to show the bytes as they arrived.

Two implementation choices matter:

* **Never rescan.** Bytes wait in one buffer until their block ends; the line-end search
  resumes where it stopped (as h11's receive buffer does), so feeding a 1 MiB line one byte at
  a time costs linear time.
* **Decode per block.** CR and LF are ASCII and never occur inside a UTF-8 multi-byte sequence,
  so decoding each complete block on its own gives exactly the text of decoding the whole
  stream, including characters split across chunks and U+FFFD for invalid bytes.
* **A fast path for what providers send.** Once the first bytes are known not to be a byte
  order mark and while the buffered bytes hold no CR, a block ends exactly at the next
  ``\n\n``: :meth:`SSEDecoder.feed` cuts every such block with ``bytes.find`` and compacts the
  buffer once per read. Everything else (CR line ends, a BOM, the end of the stream, a block
  past the size limit) takes the general path; both produce the same frames, which the
  property tests check chunking by chunking.

A frame is any block of lines ended by a blank line (or by the end of the stream), including
blocks that the browser algorithm would not dispatch: comment-only blocks, blocks without
``data``, a stray blank line, and the unterminated tail of a cut stream.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from .errors import DecoderClosed
from .frame import Frame
from .limits import DEFAULT_LIMITS

# The end of a block: the line end of a non-empty line, then an empty line's line end. A lone
# CR followed by LF is never the first line end (the pair is one CRLF).
_LINE_END = re.compile(rb"(?:\r\n|\r(?!\n)|\n)(?:\r\n|\r|\n)")
_SPLIT_LINES = re.compile("\r\n|\r|\n")
_EOL_BYTES = frozenset(b"\r\n")
# Byte membership is tested with ints: ``10 in chunk`` is a memchr, while ``b"\n" in chunk``
# first takes a buffer of the needle, about ten times the cost, and the fast path pays it per read.
_CR = 0x0D
_LF = 0x0A
_BOM = "\ufeff"
_KEEP = 1 << 16
"""Bytes of buffer past which the fast path cuts the blocks from a copy with the buffer emptied
(a big block's bytes held once), then puts back what is left (its capacity let go)."""
_BOM_BYTES = b"\xef\xbb\xbf"
_BIG = 1 << 16
"""Bytes of a block past which the fast path decodes it line by line (:func:`_big_shape`)."""
_KEEP_STARTS = 4096
"""Chunk starts held before those wholly before the pending block are let go."""


Take = Callable[[bytes, int, int, int], bool]
"""The hot path's offer (:meth:`SSEDecoder.feed_hot`): ``(bytes, start, text_end, frame
index)``, a block's lines being ``bytes[start:text_end]`` (LF-separated, no CR, no byte order
mark); True when it read the block."""


class _Fields(NamedTuple):
    event: str | None
    data: Sequence[str]
    comments: tuple[str, ...]
    retry: int | None


class SSEDecoder:
    """Incremental event-stream decoder: ``feed(bytes) -> [Frame]``, ``close() -> [Frame]``."""

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

    # -- public API -----------------------------------------------------------------------

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

    def feed_hot(self, chunk: bytes, take: Take, deliver: Callable[[Frame], None], *,
                 more: bool = False) -> None:
        """:meth:`feed` (:meth:`feed_more` with ``more``) for the engine's hot path
        (:mod:`.hot_path`), one call per read: each block the fast path cuts is first offered
        to ``take`` as its span in the bytes, before any :class:`Frame` is made; a block
        ``take`` reads counts as a frame and is never made one. Every other frame goes to
        ``deliver``, all in stream order."""
        self.feed_hot_each((chunk,), take, deliver, more=more)

    def feed_hot_each(self, reads: Iterable[bytes], take: Take,
                      deliver: Callable[[Frame], None], *, more: bool = False) -> int:
        """:meth:`feed_hot` each read in turn (with ``more``, the first one continues the
        chunk fed last), without a Python call per read while the fast path holds (``check``
        replays every session a byte per read); returns how many reads it fed."""
        count = 0
        append = self._chunk_starts.append
        for chunk in reads:
            count += 1
            if self._plain and _CR not in chunk:
                if not more:
                    append(self._received)
                self._received += len(chunk)
                buf = self._buf
                buf += chunk
                if _LF in chunk:
                    self._drain_lf(take, deliver)
                elif len(buf) > self._max_block:
                    deliver(self._overflow())
            else:
                for frame in self.feed_more(chunk) if more else self.feed(chunk):
                    deliver(frame)
            more = False
        return count

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

    # -- the fast path: no CR in the buffer, no byte order mark pending -----------------------

    def _drain_lf(self, take: Take | None = None,
                  deliver: Callable[[Frame], None] | None = None) -> list[Frame]:
        """Cut every block that ends in the buffer, where a block ends at ``\n\n`` (or is one
        stray ``\n``). One copy of the buffer, one ``find`` per block, one compaction per read.
        With ``take`` and ``deliver`` (:meth:`feed_hot`), each block is offered to ``take``
        first, and the frames go to ``deliver`` as they are made (so in stream order with the
        blocks ``take`` read), not into the list returned."""
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
                emit(self._frame(b"\n", ("",), _NO_FIELDS, offset + start, offset + end,
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
                    text, shape = None, _big_shape(data, start, text_end)
                else:
                    text = data[start:text_end].decode("utf-8", "replace")
                    shape = _common_shape(text)
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
        pieces = _SPLIT_LINES.split(self._decode(self._buf[:text_end]))
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

    def _overflow(self) -> Frame:
        """The block outgrew the limit: emit what is buffered as a non-dispatching frame and
        stop framing, so memory stays bounded whatever the stream sends."""
        lines = (f"[callscope stopped framing: block larger than {self._max_block} bytes]",)
        frame = self._emit(len(self._buf), lines, _NO_FIELDS, terminated=False)
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

    def _fields(self, lines: Sequence[str]) -> _Fields:
        """Read a block's fields (the last event id persists on the decoder)."""
        event: str | None = None
        data: list[str] = []
        comments: list[str] = []
        retry: int | None = None
        for line in lines:
            if line.startswith("data:"):  # nearly every line: no partition needed
                data.append(line[6:] if line.startswith(" ", 5) else line[5:])
                continue
            if not line:
                continue
            if line[0] == ":":
                comments.append(line[1:])
                continue
            name, colon, value = line.partition(":")
            if colon and value.startswith(" "):
                value = value[1:]
            if name == "data":
                data.append(value)
            elif name == "event":
                event = value
            elif name == "id":
                if "\x00" not in value:
                    self._last_event_id = value
            elif name == "retry":
                # All ASCII digits, as the standard says. Values too long for int() (see
                # sys.get_int_max_str_digits) are ignored: hostile input never raises.
                if value.isascii() and value.isdigit():
                    try:
                        retry = int(value)
                    except ValueError:
                        pass
            # Other field names are ignored, as the standard says; the raw line stays visible.
        return _Fields(event, data, tuple(comments), retry)

    def _emit(self, length: int, lines: tuple[str, ...], fields: _Fields, *,
              terminated: bool) -> Frame:
        start = self._block_start
        end = start + length
        frame = self._frame(bytes(self._buf[:length]), lines, fields, start, end,
                            self._chunk_of(start), self._chunk_of(end - 1), terminated=terminated)
        del self._buf[:length]
        self._block_start = end
        self._scan = 0
        return frame

    def _frame(self, raw: bytes, lines: tuple[str, ...], fields: _Fields, start: int, end: int,
               first_chunk: int, last_chunk: int, *, terminated: bool) -> Frame:
        data = fields.data
        frame = Frame(self._frames, start, end, raw, lines, first_chunk, last_chunk, fields.event,
                      data[0] if len(data) == 1 else "\n".join(data), self._last_event_id,
                      fields.retry, fields.comments, terminated and bool(data), terminated)
        self._frames += 1
        return frame

    def _chunk_of(self, offset: int) -> int:
        return self._chunk_base + max(bisect_right(self._chunk_starts, offset) - 1, 0)


_NO_FIELDS = _Fields(None, (), (), None)

_new = tuple.__new__
"""Builds a :class:`Frame` on the fast path without the named tuple's generated ``__new__`` (a
Python lambda around this call; every field is given, defaults included): half the cost."""


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


def _common_shape(text: str) -> tuple[tuple[str, ...], str | None, str] | None:
    """Lines, event and data of the two shapes nearly every provider frame has, ``data: X`` and
    ``event: E`` + ``data: X`` (no comment, id or retry), read without the general field loop;
    None for anything else."""
    nl = text.find("\n")
    if nl < 0:
        return ((text, ""), None, text[6:]) if text.startswith("data: ") else None
    if (text.startswith("event: ") and text.startswith("data: ", nl + 1)
            and text.find("\n", nl + 1) < 0):
        return (text[:nl], text[nl + 1:], ""), text[7:nl], text[nl + 7:]
    return None


def _big_shape(data: bytes, start: int, end: int) -> tuple[tuple[str, ...], str | None, str] | None:
    """:func:`_common_shape` of the block ``data[start:end]``, each line decoded on its own (the
    same text: a line end is ASCII, never inside a UTF-8 sequence), so a big block's text is
    not held whole beside its lines and its data."""
    nl = data.find(b"\n", start, end)
    if nl < 0:
        if not data.startswith(b"data: ", start):
            return None
        line = data[start:end].decode("utf-8", "replace")
        return (line, ""), None, line[6:]
    if (data.startswith(b"event: ", start) and data.startswith(b"data: ", nl + 1)
            and data.find(b"\n", nl + 1, end) < 0):
        first = data[start:nl].decode("utf-8", "replace")
        second = data[nl + 1:end].decode("utf-8", "replace")
        return (first, second, ""), first[7:], second[6:]
    return None


def decode_all(data: bytes) -> list[Frame]:
    """Frames of a whole stream delivered as one chunk."""
    decoder = SSEDecoder()
    return decoder.feed(data) + decoder.close()
