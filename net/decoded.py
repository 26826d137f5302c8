"""A compressed body recorded twice: as it came, and decoded into a session beside it.

A server may compress a stream despite ``Accept-Encoding: identity``. The session then holds
the compressed bytes (nothing received is changed), its header says so (``content_encoding``,
and ``decoded``: the name of the decoded session, or None when callscope cannot decode that
coding), and for gzip and deflate a second session ``NAME.decoded.jsonl`` holds the stream
itself, chunk by chunk at the same times: that one replays and reads as the stream.

The decoded copy never claims more than it decoded: a body that does not decode, or stops
inside a compressed member, ends the copy as ``error`` with the byte offset in the compressed
stream (the raw session's bytes) where decoding stopped, keeping every byte decoded before it.
This module only reads the raw chunks; it never changes or writes the raw session.
"""

from __future__ import annotations

import os
import zlib
from typing import Any

from msgspec.structs import replace

from ..core.session import Chunk, SessionHeader, SessionWriter, StreamEnd
from .capture_rules import DECODABLE

GZIP_WBITS = zlib.MAX_WBITS | 32
"""gzip, told apart from zlib by its header: a body labelled gzip but sent zlib-wrapped (seen
in the wild) still decodes, as before."""

ZLIB_WBITS = zlib.MAX_WBITS
RAW_WBITS = -zlib.MAX_WBITS
"""Raw DEFLATE, no header: what many servers send as ``Content-Encoding: deflate`` (RFC 9110
says zlib; browsers and httpx accept both, so callscope does too)."""

_SNIFF = 2
"""Bytes a ``deflate`` body's first read must hold to tell zlib from raw DEFLATE."""


def decoded_path(path: str) -> str:
    return path.removesuffix(".jsonl") + ".decoded.jsonl"


def encoding_of(headers: Any) -> str:
    """The response's content coding, lower case; "" for none."""
    value = str(headers.get("content-encoding", "") or "").strip().lower()
    return "" if value == "identity" else value


def header_notes(path: str, encoding: str) -> dict[str, Any]:
    """What the raw session's header says about a compressed body (nothing for a plain one)."""
    if not encoding:
        return {}
    return {"content_encoding": encoding,
            "decoded": os.path.basename(decoded_path(path)) if encoding in DECODABLE else None}


def is_zlib_header(head: bytes) -> bool:
    """Whether two bytes open a zlib stream (RFC 1950): method 8 (deflate), a window of at
    most 32 KiB, and CMF*256+FLG a multiple of 31. Raw DEFLATE rarely passes all three, and
    the check is the one curl and browsers make."""
    cmf, flg = head[0], head[1]
    return cmf & 0x0F == 8 and cmf >> 4 <= 7 and (cmf << 8 | flg) % 31 == 0


def wbits_for(encoding: str, head: bytes) -> int:
    """The zlib window bits that decode a member of ``encoding`` opening with ``head``."""
    if encoding != "deflate":
        return GZIP_WBITS  # gzip and x-gzip (the only codings DecodedCopy.open accepts besides)
    return ZLIB_WBITS if is_zlib_header(head) else RAW_WBITS


class DecodeFailed(Exception):
    """The compressed stream stopped decoding at ``offset`` (a byte of the raw stream)."""

    def __init__(self, offset: int, reason: str, plain: bytes) -> None:
        super().__init__(reason)
        self.offset, self.reason, self.plain = offset, reason, plain


class StreamDecoder:
    """Decodes one content coding read by read, into the bytes the server compressed.

    Rules: a gzip body may be several members back to back (RFC 1952 2.2; servers that gzip
    each flush send one per event), so when a member ends its leftover bytes start the next,
    however the members fall across reads. A deflate body is one stream: bytes after its end
    are an error, not a second stream. ``offset`` counts the compressed bytes fed so far."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self.offset = 0
        self._member: Any = None  # the zlib decompressobj of the member being read, if any
        self._ended_once = False  # a member has ended (so a deflate body is complete)
        self._held = b""  # a deflate body's first bytes, until there are enough to sniff

    @property
    def inside_member(self) -> bool:
        """Whether the bytes so far stop inside a member (a truncated body)."""
        return self._member is not None or bool(self._held)

    @property
    def received(self) -> int:
        """Compressed bytes fed so far, decoded or held."""
        return self.offset + len(self._held)

    def feed(self, data: bytes) -> bytes:
        """The plain bytes ``data`` completes; raises :class:`DecodeFailed`."""
        if self.encoding not in DECODABLE:
            raise DecodeFailed(self.offset, f"callscope does not decode {self.encoding!r}", b"")
        data, self._held = self._held + data, b""
        out: list[bytes] = []
        while data:
            if self._member is None and not self._start(data):
                self._held = data  # too short to sniff: held, counted when it is decoded
                break
            data = self._decode(data, out)
        return b"".join(out)

    def _start(self, data: bytes) -> bool:
        """Open the member ``data`` begins; False when a deflate body is too short to tell."""
        if self._ended_once and self.encoding == "deflate":
            raise DecodeFailed(self.offset, "bytes after the end of the deflate stream", b"")
        if self.encoding == "deflate" and len(data) < _SNIFF:
            return False
        self._member = zlib.decompressobj(wbits=wbits_for(self.encoding, data[:_SNIFF]))
        return True

    def _decode(self, data: bytes, out: list[bytes]) -> bytes:
        """Decode ``data`` into ``out`` with the open member; the bytes after it, if it ended."""
        member = self._member
        before = member.copy()  # (cheap; replayed only when the read fails, to find the byte)
        try:
            out.append(member.decompress(data))
        except zlib.error as exc:
            offset, plain = _failure_point(before, data)
            raise DecodeFailed(self.offset + offset, str(exc), b"".join(out) + plain) from exc
        if not member.eof:
            self.offset += len(data)
            return b""
        rest: bytes = member.unused_data
        self.offset += len(data) - len(rest)
        self._member, self._ended_once = None, True  # the next byte, if any, opens a member
        return rest


def _failure_point(member: Any, data: bytes) -> tuple[int, bytes]:
    """Where in ``data`` the decoder ``member`` fails, byte by byte, and what it decoded
    before: zlib says a read failed, not where, and the offset is what the user looks up in
    the raw session."""
    plain: list[bytes] = []
    for i in range(len(data)):
        try:
            plain.append(member.decompress(data[i:i + 1]))
        except zlib.error:
            return i, b"".join(plain)
    return len(data), b"".join(plain)


class DecodedCopy:
    """The decoded session beside ``path``, written chunk by chunk."""

    def __init__(self, path: str, header: SessionHeader, encoding: str) -> None:
        headers = {k: v for k, v in (header.response_headers or {}).items()
                   if k.lower() != "content-encoding"}
        self.header = replace(header, response_headers=headers, extra={
            **header.extra, "decoded_from": os.path.basename(path), "content_encoding": encoding,
            "decoded": None})
        self.writer = SessionWriter(decoded_path(path), self.header)
        self._decoder = StreamDecoder(encoding)
        # A coding callscope cannot decode (open() makes no copy of one) is never copied as
        # if it had decoded: the copy is empty and ends as an error.
        self.failure: DecodeFailed | None = None if encoding in DECODABLE else DecodeFailed(
            0, f"callscope does not decode {encoding!r}", b"")
        """Why the copy stopped growing (its end says so), or None while it decodes."""

    @staticmethod
    def open(path: str, header: SessionHeader, encoding: str) -> DecodedCopy | None:
        return DecodedCopy(path, header, encoding) if encoding in DECODABLE else None

    def write(self, chunk: Chunk) -> Chunk | None:
        """The decoded bytes of one raw chunk (written), or None when it decodes to nothing.
        After a decode error nothing more is decoded (the raw session keeps every byte)."""
        if self.failure is not None:
            return None
        try:
            plain = self._decoder.feed(chunk.data)
        except DecodeFailed as exc:
            self.failure, plain = exc, exc.plain  # what decoded before the bad byte is kept
        if not plain:
            return None
        decoded = Chunk(chunk.t, plain)
        self.writer.write(decoded)
        return decoded

    def finish(self, end: StreamEnd) -> None:
        """End the copy with the raw stream's ``end``, unless decoding failed or the body
        stops inside a member: then ``error``, said where."""
        self.writer.finish(self.end_for(end))

    def end_for(self, end: StreamEnd) -> StreamEnd:
        """The decoded copy's end, given the raw stream's."""
        decoder = self._decoder
        encoding = decoder.encoding
        if self.failure is not None:
            why = (f"the {encoding} body does not decode at byte {self.failure.offset} of the "
                   f"compressed stream ({self.failure.reason})")
        elif decoder.inside_member and end.kind == "clean":
            why = (f"the {encoding} body ends inside a compressed member at byte "
                   f"{decoder.received}: truncated")
        else:
            return end  # a transport end that is not clean already says the copy is short
        if end.kind != "clean":
            why += f"; the stream itself ended {end.kind}" + (f": {end.detail}" if end.detail
                                                              else "")
        return StreamEnd("error", detail=why + "; the raw session keeps every byte", at=end.at)
