"""Byte-exact, incremental AWS event-stream framing (sans-IO): the binary framing of Bedrock's
ConverseStream and InvokeModelWithResponseStream.

One message on the wire::

    total length (u32) | headers length (u32) | prelude CRC32 (u32, of the first 8 bytes)
    headers: name length (u8), name (UTF-8), value type (u8), value
    payload (total - headers - 16 bytes)
    message CRC32 (u32, of everything before it, prelude included)

all big-endian. The rules come from botocore's own parser (``botocore/eventstream.py``), which
``tests/test_framing_aws.py`` checks this one against, message by message, under every chunking.

* **Never rescan.** The prelude is read once, when its 12 bytes are in; then the decoder only
  waits until the whole message is buffered (one length comparison per read). Messages are cut
  from one buffer at a read position, and the buffer is compacted once per read.
* **A fault is a fact, not an exception.** A message whose message CRC fails, or whose headers
  are malformed, is still a frame (its length was vouched for by the prelude CRC), carrying
  :attr:`~.frame.Frame.fault`; the readers report it and the gate refuses the turn. A prelude
  whose CRC fails, or whose lengths no message can have, leaves nothing to trust about where
  the next message starts: the 12 prelude bytes become one faulty frame and framing stops
  (later bytes are counted, not kept), so the frames never depend on the chunking.
* **A cut is a cut.** At the end of the stream the bytes of an unfinished message become one
  frame that does not dispatch (``terminated=False``).
"""

from __future__ import annotations

import struct
import uuid
from binascii import crc32
from collections.abc import Iterable, Sequence

from .decoder_base import FramedDecoder
from .frame import Frame
from .gate.codes import Code
from .limits import DEFAULT_LIMITS

PRELUDE = 12
"""Total length, headers length and the prelude's CRC32."""
SMALLEST = PRELUDE + 4
"""A message without headers or payload: its prelude and its message CRC32."""
MAX_HEADERS = 128 * 1024
MAX_PAYLOAD = 24 * 1024 * 1024
"""botocore's limits (``_MAX_HEADERS_LENGTH``, ``_MAX_PAYLOAD_LENGTH``): a message past them is
refused by every AWS SDK, so its length is impossible here too."""

_PRELUDE = struct.Struct("!III")
_U32 = struct.Struct("!I")
_FIXED = {2: struct.Struct("!b"), 3: struct.Struct("!h"), 4: struct.Struct("!i"),
          5: struct.Struct("!q"), 8: struct.Struct("!q")}
"""Header value types of a fixed size: byte, short, integer, long, timestamp (milliseconds)."""
_BOOL, _BYTES, _STRING, _UUID = {0: "true", 1: "false"}, 6, 7, 9


class HeaderError(ValueError):
    """The headers of one message cannot be read as the format says."""


def read_headers(data: bytes | memoryview) -> tuple[tuple[str, str], ...]:
    """The headers, each value as text (integers in decimal, byte arrays and UUIDs in hex);
    :class:`HeaderError` for any header botocore would not read either."""
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    pos, end = 0, len(data)
    try:
        while pos < end:
            size = data[pos]
            name = bytes(data[pos + 1:pos + 1 + size]).decode("utf-8")
            pos += 1 + size
            if pos >= end or len(name.encode()) != size:
                raise HeaderError(f"header {name!r} is cut short")
            kind = data[pos]
            pos += 1
            value, pos = _value(data, kind, pos, end)
            if name in seen:
                raise HeaderError(f"header {name!r} appears twice")
            seen.add(name)
            out.append((name, value))
    except UnicodeDecodeError as exc:
        raise HeaderError(f"a header at byte {pos} is not UTF-8 ({exc.reason})") from None
    return tuple(out)


def _value(data: bytes | memoryview, kind: int, pos: int, end: int) -> tuple[str, int]:
    if kind in _BOOL:
        return _BOOL[kind], pos
    fixed = _FIXED.get(kind)
    if fixed is not None:
        if pos + fixed.size > end:
            raise HeaderError(f"a header value at byte {pos} is cut short")
        return str(fixed.unpack_from(data, pos)[0]), pos + fixed.size
    if kind == _UUID:
        if pos + 16 > end:
            raise HeaderError(f"a uuid header value at byte {pos} is cut short")
        return str(uuid.UUID(bytes=bytes(data[pos:pos + 16]))), pos + 16
    if kind in (_BYTES, _STRING):
        if pos + 2 > end:
            raise HeaderError(f"a header value length at byte {pos} is cut short")
        size = int.from_bytes(data[pos:pos + 2], "big")
        raw = bytes(data[pos + 2:pos + 2 + size])
        if len(raw) != size:
            raise HeaderError(f"a header value at byte {pos} is cut short")
        return (raw.decode("utf-8") if kind == _STRING else raw.hex()), pos + 2 + size
    raise HeaderError(f"unknown header value type {kind} at byte {pos - 1}")


class EventStreamDecoder(FramedDecoder):
    """Incremental AWS event-stream decoder: ``feed(bytes) -> [Frame]``, ``close() -> [Frame]``
    (the :class:`~.framing.Decoder` contract)."""

    def __init__(self, max_block_bytes: int = DEFAULT_LIMITS.max_block_bytes) -> None:
        super().__init__(max_block_bytes)
        self._buf = bytearray()
        self._pos = 0  # where the next message starts in _buf
        self._base = 0  # stream offset of _buf[0]
        self._total: int | None = None  # the pending message's length, once its prelude is read

    def _pending(self) -> int:
        return len(self._buf) - self._pos

    def close(self) -> list[Frame]:
        """End of stream: an unfinished message is a cut, shown as a frame that does not
        dispatch."""
        if self._closed:
            return []
        self._closed = True
        if self._stopped or self._pos == len(self._buf):
            return self._rest_frame()
        start = self._base + self._pos
        raw = bytes(self._buf[self._pos:])
        self._stopped = True
        return [self._new_frame(start, raw, (f"[cut: {len(raw)} bytes of an unfinished message]",),
                                event=None, data="", dispatch=False, terminated=False)]

    # -- framing ------------------------------------------------------------------------------

    def _frames_of(self, data: bytes) -> list[Frame]:
        buf = self._buf
        buf += data
        frames: list[Frame] = []
        while True:
            total = self._total
            if total is None:
                if len(buf) - self._pos < PRELUDE:
                    break
                total = self._prelude(frames)
                if total is None:
                    break
            if len(buf) - self._pos < total:
                break
            frames.append(self._message(total))
        if self._pos:
            del buf[:self._pos]  # one compaction per read
            self._base += self._pos
            self._pos = 0
        return frames

    def _prelude(self, frames: list[Frame]) -> int | None:
        """Check the pending prelude: the message's length, or None when framing stops here."""
        pos = self._pos
        total: int
        headers: int
        crc: int
        total, headers, crc = _PRELUDE.unpack_from(self._buf, pos)
        start = self._base + pos
        computed = crc32(self._buf[pos:pos + 8]) & 0xFFFFFFFF
        problem: tuple[Code, str] | None = None
        if computed != crc:
            problem = (Code.FRAME_CHECKSUM, f"prelude CRC32 {crc:#010x} at byte {start} does not "
                       f"match its bytes ({computed:#010x})")
        elif total < SMALLEST or headers > total - SMALLEST:
            problem = (Code.FRAME_LENGTH, f"message at byte {start} declares {total} bytes with "
                       f"{headers} of headers (a message has at least {SMALLEST}, headers included)")
        elif headers > MAX_HEADERS or total - headers - SMALLEST > MAX_PAYLOAD:
            problem = (Code.FRAME_LENGTH, f"message at byte {start} declares {total} bytes, past "
                       "what AWS SDKs read (128 KiB of headers, 24 MiB of payload)")
        elif total > self._max_block:
            frames.append(self._stop(start, None, overflow=True))
            return None
        if problem is not None:
            frames.append(self._stop(start, problem, overflow=False))
            return None
        self._total = total
        return total

    def _stop(self, start: int, problem: tuple[Code, str] | None, *, overflow: bool) -> Frame:
        """The prelude at ``start`` cannot be framed past: it becomes the last frame."""
        raw = bytes(self._buf[self._pos:self._pos + PRELUDE])
        self._stopped = True
        if problem is not None:
            self._keep_rest(start + PRELUDE, self._buf[self._pos + PRELUDE:])
        self._pos = len(self._buf)
        if problem is None:
            line = f"[callscope stopped framing: message larger than {self._max_block} bytes]"
            return self._new_frame(start, raw, (line,), event=None, data="", dispatch=False,
                                   terminated=False, overflow=overflow)
        code, detail = problem
        return self._new_frame(start, raw, (f"[{code.value}: {detail}]",), event=None, data="",
                               dispatch=True, terminated=True, fault=(code.value, detail))

    def _message(self, total: int) -> Frame:
        buf, pos = self._buf, self._pos
        start = self._base + pos
        raw = bytes(buf[pos:pos + total])
        self._pos = pos + total
        self._total = None
        headers_length = _U32.unpack_from(raw, 4)[0]
        fault: tuple[str, str] | None = None
        crc = _U32.unpack_from(raw, total - 4)[0]
        computed = crc32(raw[:total - 4]) & 0xFFFFFFFF
        headers: tuple[tuple[str, str], ...] = ()
        if crc != computed:
            fault = (Code.FRAME_CHECKSUM.value, f"message CRC32 {crc:#010x} of the message at byte "
                     f"{start} does not match its bytes ({computed:#010x})")
        else:
            try:
                headers = read_headers(memoryview(raw)[PRELUDE:PRELUDE + headers_length])
            except HeaderError as exc:
                fault = (Code.FRAME_HEADERS.value,
                         f"the message at byte {start}: {exc} (in its headers, from byte "
                         f"{start + PRELUDE})")
        payload = raw[PRELUDE + headers_length:total - 4].decode("utf-8", "replace")
        event = header(headers, ":event-type") or header(headers, ":exception-type")
        lines = (*(f"{name}: {value}" for name, value in headers), *payload.split("\n"))
        return self._new_frame(start, raw, lines, event=event, data=payload, dispatch=True,
                               terminated=True, headers=headers, fault=fault)


def header(headers: Sequence[tuple[str, str]], name: str) -> str | None:
    """The value of one header, or None."""
    for key, value in headers:
        if key == name:
            return value
    return None


# -- writing (the synthesizer, the emulator and the tests) ----------------------------------------

HeaderValue = str | bytes | bool | int


def encode_message(headers: Iterable[tuple[str, HeaderValue]], payload: bytes) -> bytes:
    """One message: string headers as strings (type 7), bytes as byte arrays, booleans as
    booleans, integers as 32-bit integers; both CRCs computed."""
    parts: list[bytes] = []
    for name, value in headers:
        key = name.encode()
        parts.append(bytes((len(key),)) + key)
        if isinstance(value, bool):
            parts.append(bytes((0 if value else 1,)))
        elif isinstance(value, int):
            parts.append(b"\x04" + struct.pack("!i", value))
        else:
            raw = value.encode() if isinstance(value, str) else value
            parts.append(bytes((_STRING if isinstance(value, str) else _BYTES,))
                         + len(raw).to_bytes(2, "big") + raw)
    head = b"".join(parts)
    total = SMALLEST + len(head) + len(payload)
    prelude = struct.pack("!II", total, len(head))
    prelude += _U32.pack(crc32(prelude) & 0xFFFFFFFF)
    body = prelude + head + payload
    return body + _U32.pack(crc32(body) & 0xFFFFFFFF)


def event_message(event_type: str, payload: bytes,
                  content_type: str = "application/json") -> bytes:
    """An ``event`` message as Bedrock sends one (the three headers, in its order)."""
    return encode_message(((":event-type", event_type), (":content-type", content_type),
                           (":message-type", "event")), payload)


def exception_message(exception_type: str, payload: bytes) -> bytes:
    """An ``exception`` message: an error inside the HTTP 200 (QUIRKS.md 23)."""
    return encode_message(((":exception-type", exception_type),
                           (":content-type", "application/json"),
                           (":message-type", "exception")), payload)


def describe(frame: Frame) -> list[tuple[str, str]]:
    """A binary frame, readably, for the debugger: its prelude, headers, payload size and the
    checksum verdict (label, text); nothing for a frame of another framing."""
    raw = frame.raw
    if not (frame.headers or frame.fault) or len(raw) < PRELUDE:
        return []
    total, headers_length, crc = _PRELUDE.unpack_from(raw, 0)
    prelude_ok = crc32(raw[:8]) & 0xFFFFFFFF == crc
    facts = [("prelude", f"total {total} B, headers {headers_length} B, CRC32 {crc:#010x} "
                         f"{'holds' if prelude_ok else 'DOES NOT MATCH'}")]
    if len(raw) == total:
        message_crc = _U32.unpack_from(raw, total - 4)[0]
        holds = crc32(raw[:total - 4]) & 0xFFFFFFFF == message_crc
        facts += [("headers", "; ".join(f"{name} = {value}" for name, value in frame.headers)
                              or "(not read)"),
                  ("payload", f"{max(total - headers_length - SMALLEST, 0)} B"),
                  ("message CRC", f"{message_crc:#010x} {'holds' if holds else 'DOES NOT MATCH'}")]
    facts.append(("verdict", frame.fault[1] if frame.fault else "both checksums hold"))
    return facts
