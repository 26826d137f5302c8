"""Byte-exact, incremental NDJSON framing (sans-IO): one JSON text per line, as Ollama's native
``/api/chat`` streams.

A frame is one line, its LF included (a CR before the LF is kept in ``raw`` and left out of
``data``, as ``httpx``'s ``iter_lines``, which the ollama client reads with, does). A blank line
is a frame that does not dispatch. At the end of the stream, a last line without its LF is a
frame that does not dispatch either (``terminated=False``): the stream was cut inside it, and a
cut is a cut even where the text happens to parse.

Never rescan: the LF search resumes where the last one stopped; complete lines are cut from one
buffer at a read position and the buffer is compacted once per read. UTF-8 is decoded line by
line (an LF never occurs inside a multi-byte sequence), so characters split across reads read
as if they had come whole.
"""

from __future__ import annotations

from .decoder_base import FramedDecoder
from .frame import Frame
from .limits import DEFAULT_LIMITS

_LF = 0x0A


class NDJSONDecoder(FramedDecoder):
    """Incremental NDJSON decoder: ``feed(bytes) -> [Frame]``, ``close() -> [Frame]`` (the
    :class:`~.framing.Decoder` contract)."""

    def __init__(self, max_block_bytes: int = DEFAULT_LIMITS.max_block_bytes) -> None:
        super().__init__(max_block_bytes)
        self._buf = bytearray()
        self._base = 0  # stream offset of _buf[0]
        self._scan = 0  # where the LF search resumes in _buf

    def _pending(self) -> int:
        return len(self._buf)

    def close(self) -> list[Frame]:
        """End of stream: a last line without its LF is shown, not read."""
        if self._closed:
            return []
        self._closed = True
        if self._stopped or not self._buf:
            return []
        raw = bytes(self._buf)
        self._buf.clear()
        text = raw.decode("utf-8", "replace")
        return [self._frame(self._base, raw, text, terminated=False)]

    def _frames_of(self, data: bytes) -> list[Frame]:
        buf = self._buf
        buf += data
        frames: list[Frame] = []
        pos = 0
        while True:
            lf = buf.find(_LF, max(self._scan, pos))
            if lf < 0 or lf - pos >= self._max_block:
                break
            raw = bytes(buf[pos:lf + 1])
            text = raw[:-2 if raw.endswith(b"\r\n") else -1].decode("utf-8", "replace")
            frames.append(self._frame(self._base + pos, raw, text, terminated=True))
            pos = lf + 1
        if pos:
            del buf[:pos]  # one compaction per read
            self._base += pos
        self._scan = len(buf)
        if len(buf) > self._max_block:
            line = f"[callscope stopped framing: line longer than {self._max_block} bytes]"
            frame = self._frame(self._base, bytes(buf[:self._max_block]), line, terminated=False)
            self._stopped = True
            buf.clear()
            frames.append(frame._replace(overflow=True, data=""))
        return frames

    def _frame(self, start: int, raw: bytes, text: str, *, terminated: bool) -> Frame:
        return self._new_frame(start, raw, (text, "") if terminated else (text,), event=None,
                               data=text, dispatch=terminated and bool(text.strip()),
                               terminated=terminated)
