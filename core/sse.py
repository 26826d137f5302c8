"""Byte-exact, incremental Server-Sent Events framing (sans-IO).

Feed byte chunks of any size to :class:`SSEDecoder`; it returns the :class:`Frame` objects
completed so far, and :meth:`SSEDecoder.close` flushes at the end of the stream. The reading
follows the WHATWG event-stream interpretation (HTML Living Standard, "Server-sent events",
§9.2.6), and a frame keeps everything a debugger needs to show the bytes as they arrived.

Two implementation choices matter:

* **Never rescan.** Bytes wait in one buffer until their block ends; the line-end search
  resumes where it stopped (as h11's receive buffer does), so feeding a 1 MiB line one byte at
  a time costs linear time.
* **Decode per line.** CR and LF are ASCII and never occur inside a UTF-8 multi-byte sequence,
  so decoding each complete line on its own gives exactly the text of decoding the whole
  stream, including characters split across chunks and U+FFFD for invalid bytes.

A frame is any block of lines ended by a blank line (or by the end of the stream), including
blocks that the browser algorithm would not dispatch: comment-only blocks, blocks without
``data``, a stray blank line, and the unterminated tail of a cut stream.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, replace

from .errors import DecoderClosed
from .limits import DEFAULT_LIMITS

# The end of a block: the line end of a non-empty line, then an empty line's line end. A lone
# CR followed by LF is never the first line end (the pair is one CRLF).
_LINE_END = re.compile(rb"(?:\r\n|\r(?!\n)|\n)(?:\r\n|\r|\n)")
_SPLIT_LINES = re.compile("\r\n|\r|\n")
_EOL_BYTES = frozenset(b"\r\n")
_CR = 0x0D
_BOM = "\ufeff"
_BOM_BYTES = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class Frame:
    """One block of the event stream, as received and as interpreted."""

    index: int
    start: int
    """Offset of the block's first byte in the stream."""
    end: int
    """Offset just past the block's last byte (its blank line included)."""
    raw: bytes
    """The exact bytes of the block, line ends included."""
    lines: tuple[str, ...]
    """Decoded lines, without their line ends; the unterminated tail of a cut stream included."""
    first_chunk: int
    last_chunk: int
    event: str | None
    """The value an ``event:`` field set in this block, else None."""
    data: str
    """``data`` values joined with LF (the final LF removed, as the standard says)."""
    last_event_id: str
    """The last event id in force when the block ended (it persists across blocks)."""
    retry: int | None
    comments: tuple[str, ...]
    dispatch: bool
    """Whether a browser would dispatch this block as an event."""
    terminated: bool
    """False when the stream ended before the block's blank line."""
    overflow: bool = False
    """The block outgrew the decoder's limit: framing stopped here (see :mod:`.limits`).
    ``raw`` then holds the bytes up to the limit; later bytes are counted, not kept."""

    @property
    def event_type(self) -> str:
        """The type a browser would dispatch: the event name, or ``message``."""
        return self.event or "message"


class SSEDecoder:
    """Incremental event-stream decoder: ``feed(bytes) -> [Frame]``, ``close() -> [Frame]``."""

    def __init__(self, max_block_bytes: int = DEFAULT_LIMITS.max_block_bytes) -> None:
        self._max_block = max_block_bytes
        self._overflowed = False
        self._buf = bytearray()  # bytes of the current, unfinished block
        self._block_start = 0  # stream offset of _buf[0]
        self._scan = 0  # index in _buf where the block-end search resumes
        self._chunk_starts: list[int] = []
        self._received = 0
        self._frames = 0
        self._closed = False
        self._first_line = True
        self._last_event_id = ""
        self._reset_block()

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
        if self._closed:
            raise DecoderClosed("feed() after close()")
        self._chunk_starts.append(self._received)
        self._received += len(chunk)
        if self._overflowed:
            return []
        self._buf += chunk
        if not self._first_line and b"\n" not in chunk and b"\r" not in chunk \
                and self._buf[-len(chunk) - 1:-len(chunk)] != b"\r":
            # No line end arrived (a read inside a long line): no block can have ended.
            return [self._overflow()] if len(self._buf) > self._max_block else []
        frames = self._drain(final=False)
        if len(self._buf) > self._max_block:
            frames.append(self._overflow())
        return frames

    def close(self) -> list[Frame]:
        """End of stream: a trailing CR ends its line; an unfinished block becomes a frame that
        does not dispatch."""
        if self._closed:
            return []
        self._closed = True
        if self._overflowed:
            return []
        frames = self._drain(final=True)
        if len(self._buf) > self._max_block:
            frames.append(self._overflow())
        elif self._buf:
            frames.append(self._block(len(self._buf), len(self._buf), terminated=False))
        return frames

    # -- internals ------------------------------------------------------------------------

    def _reset_block(self) -> None:
        self._lines: list[str] = []
        self._event: str | None = None
        self._data: list[str] = []
        self._retry: int | None = None
        self._comments: list[str] = []

    def _drain(self, *, final: bool) -> list[Frame]:
        """Cut every complete block off the buffer: one regex search per block, resumed where
        the previous search stopped, and one decode per block."""
        frames: list[Frame] = []
        buf = self._buf
        while buf:
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
            match = _LINE_END.search(buf, self._scan)
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
            for line in complete:
                self._field(line)
            self._lines = [*complete, partial] if partial else complete
        else:
            for line in pieces:
                if line:
                    self._field(line)
            self._lines = [*pieces, ""] if text_end < length and pieces != [""] else pieces
        return self._emit(length, terminated=terminated)

    def _bom_checked(self, final: bool) -> bool:
        """True once the first bytes can be told apart from a byte order mark."""
        buf = self._buf
        if len(buf) >= 3 or final or not _BOM_BYTES.startswith(bytes(buf)):
            return True
        return False

    def _overflow(self) -> Frame:
        """The block outgrew the limit: emit what is buffered as a non-dispatching frame and
        stop framing, so memory stays bounded whatever the stream sends."""
        self._lines = [f"[callscope stopped framing: block larger than {self._max_block} bytes]"]
        frame = self._emit(len(self._buf), terminated=False)
        self._overflowed = True
        return replace(frame, overflow=True)

    def _decode(self, raw: bytes | bytearray) -> str:
        text = raw.decode("utf-8", "replace")
        if self._first_line:
            self._first_line = False
            if text.startswith(_BOM):
                text = text[1:]
        return text

    def _field(self, line: str) -> None:
        if line[0] == ":":
            self._comments.append(line[1:])
            return
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\x00" not in value:
                self._last_event_id = value
        elif name == "retry":
            # All ASCII digits, as the standard says. Values too long for int() (see
            # sys.get_int_max_str_digits) are ignored: hostile input never raises.
            if value.isascii() and value.isdigit():
                try:
                    self._retry = int(value)
                except ValueError:
                    pass
        # Other field names are ignored, as the standard says; the raw line stays visible.

    def _emit(self, length: int, *, terminated: bool) -> Frame:
        raw = bytes(self._buf[:length])
        start = self._block_start
        end = start + length
        frame = Frame(
            index=self._frames,
            start=start,
            end=end,
            raw=raw,
            lines=tuple(self._lines),
            first_chunk=self._chunk_of(start),
            last_chunk=self._chunk_of(end - 1),
            event=self._event,
            data="\n".join(self._data),
            last_event_id=self._last_event_id,
            retry=self._retry,
            comments=tuple(self._comments),
            dispatch=terminated and bool(self._data),
            terminated=terminated,
        )
        self._frames += 1
        del self._buf[:length]
        self._block_start = end
        self._scan = 0
        self._reset_block()
        return frame

    def _chunk_of(self, offset: int) -> int:
        return max(bisect_right(self._chunk_starts, offset) - 1, 0)


def decode_all(data: bytes) -> list[Frame]:
    """Frames of a whole stream delivered as one chunk."""
    decoder = SSEDecoder()
    return decoder.feed(data) + decoder.close()
