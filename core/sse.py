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

_LINE_END = re.compile(rb"[\r\n]")
_CR = 0x0D
_LF = 0x0A
_BOM = "\ufeff"


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
        self._line_start = 0  # index in _buf where the current line begins
        self._scan = 0  # index in _buf where the line-end search resumes
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
            tail = self._buf[self._line_start:]
            if tail:
                self._lines.append(self._decode(tail))
            frames.append(self._emit(len(self._buf), terminated=False))
        return frames

    # -- internals ------------------------------------------------------------------------

    def _reset_block(self) -> None:
        self._lines: list[str] = []
        self._event: str | None = None
        self._data: list[str] = []
        self._retry: int | None = None
        self._comments: list[str] = []

    def _drain(self, *, final: bool) -> list[Frame]:
        frames: list[Frame] = []
        buf = self._buf
        while True:
            match = _LINE_END.search(buf, self._scan)
            if match is None:
                self._scan = len(buf)
                return frames
            i = match.start()
            if i >= self._max_block:
                # The block is already over the limit: leave it for feed()/close() to cut off.
                self._scan = i
                return frames
            if buf[i] == _LF:
                after = i + 1
            elif i + 1 < len(buf):
                after = i + 2 if buf[i + 1] == _LF else i + 1
            elif final:
                after = i + 1
            else:
                # A CR as the last byte so far: an LF may follow in the next chunk, and the
                # pair is one line end. Wait, so frames do not depend on the chunking.
                self._scan = i
                return frames
            line = self._decode(buf[self._line_start:i])
            self._lines.append(line)
            if line:
                self._field(line)
                self._line_start = self._scan = after
            else:
                frames.append(self._emit(after, terminated=True))
                buf = self._buf

    def _overflow(self) -> Frame:
        """The block outgrew the limit: emit what is buffered as a non-dispatching frame and
        stop framing, so memory stays bounded whatever the stream sends."""
        self._lines.append(f"[callscope stopped framing: block larger than {self._max_block} bytes]")
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
        self._line_start = self._scan = 0
        self._reset_block()
        return frame

    def _chunk_of(self, offset: int) -> int:
        return max(bisect_right(self._chunk_starts, offset) - 1, 0)


def decode_all(data: bytes) -> list[Frame]:
    """Frames of a whole stream delivered as one chunk."""
    decoder = SSEDecoder()
    return decoder.feed(data) + decoder.close()
